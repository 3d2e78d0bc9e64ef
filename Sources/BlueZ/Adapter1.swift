// org.bluez.Adapter1: a local Bluetooth controller.
import DBus

/// A proxy for `org.bluez.Adapter1` at `/org/bluez/hciN`.
public struct Adapter1: Sendable {
    /// `org.bluez.Adapter1`.
    public static let interface = "org.bluez.Adapter1"

    /// The connection calls go through.
    public let connection: Connection
    /// The adapter's object path, e.g. `/org/bluez/hci0`.
    public let path: ObjectPath

    /// A proxy for the adapter at `path`.
    public init(connection: Connection, path: ObjectPath) {
        self.connection = connection
        self.path = path
    }

    /// The adapter's name, the last path element (`hci0`).
    public var name: String { Self.name(of: path) }

    /// The last element of an adapter path (`/org/bluez/hci1` → `hci1`).
    public static func name(of path: ObjectPath) -> String {
        String(path.rawValue.split(separator: "/").last ?? "")
    }

    /// The hci index of an adapter path (`hci1` → 1), nil when it does not follow BlueZ's naming.
    public static func index(of path: ObjectPath) -> Int? {
        let n = name(of: path)
        guard n.hasPrefix("hci") else { return nil }
        return Int(n.dropFirst(3))
    }

    // MARK: - Properties

    /// A snapshot of the adapter's properties, decoded tolerantly (wrongly typed values are nil).
    public struct Properties: Sendable, Equatable {
        /// `Address`.
        public var address: String?
        /// `AddressType` ("public" or "random").
        public var addressType: String?
        /// `Name` (the system name).
        public var name: String?
        /// `Alias`.
        public var alias: String?
        /// `Powered`.
        public var powered: Bool?
        /// `PowerState` ("on", "off", "off-enabling", "on-disabling", "off-blocked"), BlueZ 5.66+.
        public var powerState: String?
        /// `Discoverable`.
        public var discoverable: Bool?
        /// `Pairable`.
        public var pairable: Bool?
        /// `Discovering`.
        public var discovering: Bool?
        /// `UUIDs`.
        public var uuids: [String]?
        /// `Roles` ("central", "peripheral", "central-peripheral").
        public var roles: [String]?
        /// `DiscoverableTimeout` in seconds (0: forever).
        public var discoverableTimeout: UInt32?
        /// `Manufacturer`: the controller's company identifier (BlueZ 5.71+).
        public var manufacturer: UInt16?
        /// `Version`: the controller's Bluetooth core version code (BlueZ 5.71+).
        public var version: UInt8?
        /// `Modalias`.
        public var modalias: String?

        /// Decodes `properties` (as held by the ``ObjectTree``).
        public init(_ properties: [String: DBusValue], path: ObjectPath? = nil) {
            let r = PropertyReader(properties, interface: Adapter1.interface, path: path)
            address = r.get("Address")
            addressType = r.get("AddressType")
            name = r.get("Name")
            alias = r.get("Alias")
            powered = r.get("Powered")
            powerState = r.get("PowerState")
            discoverable = r.get("Discoverable")
            pairable = r.get("Pairable")
            discovering = r.get("Discovering")
            uuids = r.get("UUIDs")
            roles = r.get("Roles")
            discoverableTimeout = r.get("DiscoverableTimeout")
            manufacturer = r.get("Manufacturer")
            version = r.get("Version")
            modalias = r.get("Modalias")
        }
    }

    // MARK: - Discovery

    /// A discovery filter for `SetDiscoveryFilter` (only the keys set are sent).
    public struct DiscoveryFilter: Sendable, Equatable {
        /// `UUIDs`: service UUIDs (strings as BlueZ takes them); empty means any.
        public var uuids: [String] = []
        /// `RSSI`: minimum RSSI in dBm.
        public var rssi: Int16?
        /// `Pathloss`.
        public var pathloss: UInt16?
        /// `Transport`: "auto", "bredr" or "le".
        public var transport: String?
        /// `DuplicateData`: report every advertisement, not only changes.
        public var duplicateData: Bool?
        /// `Pattern`: address or name prefix.
        public var pattern: String?
        /// `Discoverable`: make the adapter discoverable while this client discovers.
        public var discoverable: Bool?

        /// An empty filter.
        public init(uuids: [String] = [], rssi: Int16? = nil, pathloss: UInt16? = nil, transport: String? = nil,
                    duplicateData: Bool? = nil, pattern: String? = nil, discoverable: Bool? = nil) {
            self.discoverable = discoverable
            self.uuids = uuids
            self.rssi = rssi
            self.pathloss = pathloss
            self.transport = transport
            self.duplicateData = duplicateData
            self.pattern = pattern
        }

        /// The `a{sv}` argument.
        public var dbusValue: DBusValue {
            var d: [String: DBusValue] = [:]
            if !uuids.isEmpty { d["UUIDs"] = uuids.dbusValue }
            if let rssi { d["RSSI"] = .int16(rssi) }
            if let pathloss { d["Pathloss"] = .uint16(pathloss) }
            if let transport { d["Transport"] = .string(transport) }
            if let duplicateData { d["DuplicateData"] = .bool(duplicateData) }
            if let pattern { d["Pattern"] = .string(pattern) }
            if let discoverable { d["Discoverable"] = .bool(discoverable) }
            return .properties(d)
        }
    }

    /// Calls `org.bluez.Adapter1.SetDiscoveryFilter` (nil clears this client's filter).
    public func setDiscoveryFilter(_ filter: DiscoveryFilter?, timeout: Duration = .seconds(5),
                                   completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "SetDiscoveryFilter",
                             arguments: [(filter ?? DiscoveryFilter()).dbusValue], timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.Adapter1.StartDiscovery`.
    public func startDiscovery(timeout: Duration = .seconds(5), completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "StartDiscovery", timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.Adapter1.StopDiscovery`.
    public func stopDiscovery(timeout: Duration = .seconds(5), completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "StopDiscovery", timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.Adapter1.RemoveDevice` (disconnects and forgets the device).
    public func removeDevice(_ device: ObjectPath, timeout: Duration = .seconds(5),
                             completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "RemoveDevice",
                             arguments: [.objectPath(device)], timeout: timeout) { completion($0.void) }
    }

    /// Sets `Powered` (`org.freedesktop.DBus.Properties.Set`).
    public func setPowered(_ on: Bool, timeout: Duration = .seconds(5),
                           completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezSetProperty(path: path, interface: Self.interface, name: "Powered", value: .bool(on),
                                    timeout: timeout, completion: completion)
    }

    /// Sets `Alias` (an empty string resets it to the system name).
    public func setAlias(_ alias: String, timeout: Duration = .seconds(5),
                         completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezSetProperty(path: path, interface: Self.interface, name: "Alias", value: .string(alias),
                                    timeout: timeout, completion: completion)
    }

    /// Sets `Discoverable` (bluetoothd refuses with `NotReady` while the adapter is off).
    public func setDiscoverable(_ on: Bool, timeout: Duration = .seconds(5),
                                completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezSetProperty(path: path, interface: Self.interface, name: "Discoverable", value: .bool(on),
                                    timeout: timeout, completion: completion)
    }

    /// Sets `DiscoverableTimeout` in seconds (0: discoverable until switched off).
    public func setDiscoverableTimeout(_ seconds: UInt32, timeout: Duration = .seconds(5),
                                       completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezSetProperty(path: path, interface: Self.interface, name: "DiscoverableTimeout", value: .uint32(seconds),
                                    timeout: timeout, completion: completion)
    }

    /// Sets `Pairable`.
    public func setPairable(_ on: Bool, timeout: Duration = .seconds(5),
                            completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezSetProperty(path: path, interface: Self.interface, name: "Pairable", value: .bool(on),
                                    timeout: timeout, completion: completion)
    }

    // MARK: - Async forms

    /// Calls `org.bluez.Adapter1.StartDiscovery`.
    public func startDiscovery(timeout: Duration = .seconds(5)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "StartDiscovery", timeout: timeout)
    }

    /// Calls `org.bluez.Adapter1.StopDiscovery`.
    public func stopDiscovery(timeout: Duration = .seconds(5)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "StopDiscovery", timeout: timeout)
    }

    /// Calls `org.bluez.Adapter1.SetDiscoveryFilter`.
    public func setDiscoveryFilter(_ filter: DiscoveryFilter?, timeout: Duration = .seconds(5)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "SetDiscoveryFilter",
                                           arguments: [(filter ?? DiscoveryFilter()).dbusValue], timeout: timeout)
    }
}
