// org.bluez.Device1: a remote device known to an adapter.
import DBus
import Foundation

/// A proxy for `org.bluez.Device1` at `/org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX`.
public struct Device1: Sendable {
    /// `org.bluez.Device1`.
    public static let interface = "org.bluez.Device1"

    /// The connection calls go through.
    public let connection: Connection
    /// The device's object path.
    public let path: ObjectPath

    /// A proxy for the device at `path`.
    public init(connection: Connection, path: ObjectPath) {
        self.connection = connection
        self.path = path
    }

    // MARK: - Properties

    /// A snapshot of the device's properties, decoded tolerantly (wrongly typed values are nil).
    public struct Properties: Sendable, Equatable {
        /// `Address`.
        public var address: String?
        /// `AddressType` ("public" or "random").
        public var addressType: String?
        /// `Name` (the advertised or GAP name).
        public var name: String?
        /// `Alias`.
        public var alias: String?
        /// `Appearance`.
        public var appearance: UInt16?
        /// `UUIDs`: advertised service UUIDs, then the resolved services'.
        public var uuids: [String]?
        /// `Paired`.
        public var paired: Bool?
        /// `Bonded`.
        public var bonded: Bool?
        /// `Trusted`.
        public var trusted: Bool?
        /// `Blocked`.
        public var blocked: Bool?
        /// `Connected`.
        public var connected: Bool?
        /// `ServicesResolved`.
        public var servicesResolved: Bool?
        /// `RSSI` (only while discovering).
        public var rssi: Int16?
        /// `TxPower` (only while discovering).
        public var txPower: Int16?
        /// `ManufacturerData`: company id → bytes.
        public var manufacturerData: [UInt16: Data]?
        /// `ServiceData`: UUID string → bytes.
        public var serviceData: [String: Data]?
        /// `AdvertisingData`: the AD structures bluetoothd keeps raw, AD type → data (`a{yv}`).
        /// Only the types bluetoothd does not decode into other properties (never flags, UUID
        /// lists, names, TX power, appearance, service or manufacturer data); absent when there are
        /// none, and before 5.78 unless bluetoothd runs with `--experimental`.
        public var advertisingData: [UInt8: Data]?
        /// `AdvertisingFlags`: the advertisement's Flags AD structure (`ay`); absent before 5.78
        /// unless bluetoothd runs with `--experimental`, and until a report carried flags.
        public var advertisingFlags: Data?
        /// `Adapter`.
        public var adapter: ObjectPath?

        /// Decodes `properties` (as held by the ``ObjectTree``).
        public init(_ properties: [String: DBusValue], path: ObjectPath? = nil) {
            let r = PropertyReader(properties, interface: Device1.interface, path: path)
            address = r.get("Address")
            addressType = r.get("AddressType")
            name = r.get("Name")
            alias = r.get("Alias")
            appearance = r.get("Appearance")
            uuids = r.get("UUIDs")
            paired = r.get("Paired")
            bonded = r.get("Bonded")
            trusted = r.get("Trusted")
            blocked = r.get("Blocked")
            connected = r.get("Connected")
            servicesResolved = r.get("ServicesResolved")
            rssi = r.get("RSSI")
            txPower = r.get("TxPower")
            manufacturerData = r.manufacturerData("ManufacturerData")
            serviceData = r.serviceData("ServiceData")
            advertisingData = r.adStructures("AdvertisingData")
            advertisingFlags = r.bytes("AdvertisingFlags")
            adapter = r.get("Adapter")
        }
    }

    // MARK: - Methods

    /// Calls `org.bluez.Device1.Connect` (answers once the link is up, before service discovery).
    public func connect(timeout: Duration, completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "Connect", timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.Device1.Disconnect`.
    public func disconnect(timeout: Duration = .seconds(10), completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "Disconnect", timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.Device1.Pair`.
    public func pair(timeout: Duration = .seconds(30), completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "Pair", timeout: timeout) { completion($0.void) }
    }

    /// Sets `Trusted` (`org.freedesktop.DBus.Properties.Set`).
    public func setTrusted(_ on: Bool, timeout: Duration = .seconds(5), completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezSetProperty(path: path, interface: Self.interface, name: "Trusted", value: .bool(on),
                                    timeout: timeout, completion: completion)
    }

    /// Calls `org.bluez.Device1.Connect`.
    public func connect(timeout: Duration) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "Connect", timeout: timeout)
    }

    /// Calls `org.bluez.Device1.Disconnect`.
    public func disconnect(timeout: Duration = .seconds(10)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "Disconnect", timeout: timeout)
    }
}
