// ServicesChange: what changed in a connected peripheral's GATT services.

/// One change of a connected ``Peripheral``'s services, reported by
/// ``Peripheral/whenServicesChange(capacity:)``: the peripheral sent a Service Changed
/// indication and BlueZ re-read part of its GATT database (removing and adding
/// `org.bluez.GattService1` objects), or BlueZ re-resolved its services
/// (`Device1.ServicesResolved` false, then true, with the link up).
public struct ServicesChange: Sendable, CustomStringConvertible {
    /// The peripheral.
    public let peripheral: Peripheral
    /// The services that appeared: new ``Service`` objects, ready for
    /// ``Service/discoverCharacteristics(_:timeout:)``.
    public let added: [Service]
    /// The services that went away: the ``Service`` objects the app may hold for them. Their
    /// characteristics are terminated (notification streams finish with `.terminated`; they are
    /// no longer in ``Peripheral/services``); find the replacement in ``added`` by UUID.
    public let removed: [Service]

    /// `ServicesChange(+[UUID…] -[UUID…])`.
    public var description: String {
        "ServicesChange(+\(added.map(\.uuid.description)) -\(removed.map(\.uuid.description)))"
    }
}
