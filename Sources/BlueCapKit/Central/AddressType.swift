// AddressType: whether a device's address is public or random.

// MARK: - AddressType

/// The kind of a device's LE address, as BlueZ reports it in `org.bluez.Device1.AddressType`.
public enum AddressType: String, Sendable, Hashable, CaseIterable {
    /// A public address (IEEE-assigned, the same for the device's life): `"public"`.
    case `public`
    /// A random address (static, or a resolvable/non-resolvable private one that may change;
    /// a non-connectable advertisement goes out from one): `"random"`.
    case random
}
