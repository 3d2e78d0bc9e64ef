// PeripheralAddressType: the LE address type BlueZ is told to connect with.

/// The type of an LE device address, as `org.bluez.Adapter1.ConnectDevice` takes it
/// (`AddressType`) and `org.bluez.Device1.AddressType` reports it.
public enum PeripheralAddressType: String, Sendable, Hashable, CaseIterable {
    /// A public address (IEEE-assigned, fixed): "public".
    case `public`
    /// A random address (static, or resolvable private): "random".
    case random
}
