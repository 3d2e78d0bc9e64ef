// Adapter: a snapshot of one local controller as bluetoothd publishes it (org.bluez.Adapter1).
import BlueZ
import DBus

/// One local Bluetooth controller (`/org/bluez/hciN`), as read from `org.bluez.Adapter1` when
/// the snapshot was taken. Values BlueZ does not publish (older versions) are nil.
public struct Adapter: Sendable, Equatable, Identifiable, CustomStringConvertible {
    /// The name, `hci0`; unique while the adapter is plugged in.
    public var name: String
    /// The object path, `/org/bluez/hci0`.
    public var path: String
    /// `Address`; stays the same when a USB adapter is unplugged and plugged back.
    public var address: String
    /// `AddressType` ("public" or "random").
    public var addressType: String?
    /// `Name`: the system name.
    public var systemName: String?
    /// `Alias`: the name shown to remote devices.
    public var alias: String?
    /// `Powered`.
    public var powered: Bool
    /// `Discoverable`.
    public var discoverable: Bool
    /// `DiscoverableTimeout` in seconds (0: forever).
    public var discoverableTimeout: UInt32?
    /// `Pairable`.
    public var pairable: Bool
    /// `Discovering`: some client (maybe another program) is scanning on it.
    public var discovering: Bool
    /// `Roles` ("central", "peripheral", "central-peripheral").
    public var roles: [String]
    /// `Manufacturer`: the controller's company identifier (BlueZ 5.66+ with --experimental).
    public var manufacturer: UInt16?
    /// `Version`: the controller's Bluetooth core version code (BlueZ 5.66+ with --experimental).
    public var version: UInt8?
    /// Whether `org.bluez.AdvertisementMonitorManager1` is there (passive scanning; needs
    /// bluetoothd --experimental on BlueZ 5.66).
    public var supportsMonitoring: Bool

    /// The name.
    public var id: String { name }

    /// Reads the interfaces of `path` as held by the object tree; nil without `Adapter1`.
    init?(path: ObjectPath, interfaces: [String: [String: DBusValue]]) {
        guard let raw = interfaces[Adapter1.interface] else { return nil }
        let p = Adapter1.Properties(raw, path: path)
        name = Adapter1.name(of: path)
        self.path = path.rawValue
        address = p.address ?? ""
        addressType = p.addressType
        systemName = p.name
        alias = p.alias
        powered = p.powered ?? false
        discoverable = p.discoverable ?? false
        discoverableTimeout = p.discoverableTimeout
        pairable = p.pairable ?? false
        discovering = p.discovering ?? false
        roles = p.roles ?? []
        manufacturer = p.manufacturer
        version = p.version
        supportsMonitoring = interfaces[AdvertisementMonitorManager1.interface] != nil
    }

    public var description: String {
        "\(name) \(address) \"\(alias ?? systemName ?? "")\" \(powered ? "on" : "off")"
            + (discovering ? " discovering" : "") + (discoverable ? " discoverable" : "")
    }
}
