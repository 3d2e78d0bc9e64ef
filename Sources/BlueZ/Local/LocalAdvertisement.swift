// LocalAdvertisement: an org.bluez.LEAdvertisement1 object registered with
// org.bluez.LEAdvertisingManager1.

import DBus
import Foundation
import Locking

// MARK: - LocalAdvertisement

/// What to advertise: the properties of an exported `org.bluez.LEAdvertisement1` object.
public struct LocalAdvertisement: Sendable, Equatable {
    /// `Type`.
    public enum Kind: String, Sendable, Equatable {
        /// Connectable (`"peripheral"`).
        case peripheral
        /// Non-connectable (`"broadcast"`).
        case broadcast
    }

    /// `Type`: `"peripheral"` (connectable) or `"broadcast"`.
    public var type: Kind
    /// `ServiceUUIDs`.
    public var serviceUUIDs: [String]
    /// `LocalName`.
    public var localName: String?
    /// `ManufacturerData` (`a{qv}`, each value `ay`), keyed by company identifier.
    public var manufacturerData: [UInt16: Data]
    /// `ServiceData` (`a{sv}`, each value `ay`), keyed by service UUID.
    public var serviceData: [String: Data]
    /// `Includes`, e.g. `["tx-power"]`.
    public var includes: [String]
    /// `Appearance`.
    public var appearance: UInt16?
    /// `Discoverable`: the General Discoverable flag. BlueZ centrals ignore LE advertisers
    /// without it during discovery, so it defaults to true.
    public var discoverable: Bool?
    /// `TxPower` requested, in dBm.
    public var txPower: Int16?

    /// An advertisement.
    public init(type: Kind = .peripheral, serviceUUIDs: [String] = [], localName: String? = nil,
                manufacturerData: [UInt16: Data] = [:], serviceData: [String: Data] = [:],
                includes: [String] = ["tx-power"], appearance: UInt16? = nil, discoverable: Bool? = true,
                txPower: Int16? = nil) {
        self.type = type
        self.serviceUUIDs = serviceUUIDs
        self.localName = localName
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.includes = includes
        self.appearance = appearance
        self.discoverable = discoverable
        self.txPower = txPower
    }

    /// The `org.bluez.LEAdvertisement1` properties.
    var properties: [DBusProperty] {
        var p = [
            DBusProperty("Type", type: .string, value: .string(type.rawValue)),
            DBusProperty("ServiceUUIDs", type: .array(.string), value: serviceUUIDs.map { $0.lowercased() }.dbusValue),
            DBusProperty("Includes", type: .array(.string), value: includes.dbusValue),
        ]
        if let localName { p.append(DBusProperty("LocalName", type: .string, value: .string(localName))) }
        if !manufacturerData.isEmpty {
            let entries = manufacturerData.sorted { $0.key < $1.key }.map {
                DBusValue.DictEntry(.uint16($0.key), .variant($0.value.dbusValue))
            }
            p.append(DBusProperty("ManufacturerData", type: .dict(key: .uint16, value: .variant),
                                  value: .dict(key: .uint16, value: .variant, entries)))
        }
        if !serviceData.isEmpty {
            let entries = serviceData.sorted { $0.key < $1.key }.map {
                DBusValue.DictEntry(.string($0.key.lowercased()), .variant($0.value.dbusValue))
            }
            p.append(DBusProperty("ServiceData", type: .dict(key: .string, value: .variant),
                                  value: .dict(key: .string, value: .variant, entries)))
        }
        if let appearance { p.append(DBusProperty("Appearance", type: .uint16, value: .uint16(appearance))) }
        if let discoverable { p.append(DBusProperty("Discoverable", type: .bool, value: .bool(discoverable))) }
        if let txPower { p.append(DBusProperty("TxPower", type: .int16, value: .int16(txPower))) }
        return p
    }

    /// Exports the advertisement at `path` (answering only `allowedCaller`), then calls
    /// `org.bluez.LEAdvertisingManager1.RegisterAdvertisement(path, {})` on `adapter`.
    /// `onRelease` runs (on the connection's thread) when bluetoothd calls `Release()`.
    public func register(on connection: Connection, adapter: ObjectPath, path: ObjectPath = "/org/bluecap/advertisement0",
                         allowedCaller: String, timeout: Duration = .seconds(25),
                         onRelease: (@Sendable () -> Void)? = nil) async throws(BlueZError) -> AdvertisementHandle {
        let handle = AdvertisementHandle(advertisement: self, connection: connection, adapter: adapter, path: path, onRelease: onRelease)
        try handle.export(allowedCaller: allowedCaller)
        do {
            try await handle.registerWithBlueZ(timeout: timeout)
        } catch {
            handle.unexport()
            throw error
        }
        return handle
    }
}

// MARK: - AdvertisementHandle

/// A registered ``LocalAdvertisement``. ``unregister()`` calls
/// `LEAdvertisingManager1.UnregisterAdvertisement` and then removes the object.
public final class AdvertisementHandle: Sendable {
    /// The advertisement.
    public let advertisement: LocalAdvertisement
    /// The adapter it is registered on.
    public let adapter: ObjectPath
    /// The object path.
    public let path: ObjectPath
    private let connection: Connection
    private let onRelease: (@Sendable () -> Void)?
    private struct State {
        var export: ExportHandle?
        var registered = false
        var released = false
    }
    // Sendable through this lock; no call is made while holding it.
    private let state = Locked(State())

    init(advertisement: LocalAdvertisement, connection: Connection, adapter: ObjectPath, path: ObjectPath,
         onRelease: (@Sendable () -> Void)?) {
        self.advertisement = advertisement
        self.connection = connection
        self.adapter = adapter
        self.path = path
        self.onRelease = onRelease
    }

    deinit { unexport() }

    /// Whether bluetoothd holds the advertisement: registered, not released, not unregistered.
    public var isRegistered: Bool { state.withLock { $0.registered } }

    /// Whether bluetoothd called `Release()` since the last registration.
    public var wasReleased: Bool { state.withLock { $0.released } }

    /// The unique name allowed to call the object; "" allows no one.
    public var allowedCaller: String? {
        get { state.withLock { $0.export }?.allowedCaller }
        set { state.withLock { $0.export }?.allowedCaller = newValue }
    }

    func export(allowedCaller: String) throws(BlueZError) {
        let release = DBusMethod("Release") { [weak self] _, r in
            r.succeed()
            self?.released()
        }
        do {
            let h = try connection.export([DBusInterface(name: "org.bluez.LEAdvertisement1", methods: [release],
                                                         properties: advertisement.properties)],
                                          at: path, allowedCaller: allowedCaller)
            state.withLock { $0.export = h }
        } catch {
            throw BlueZError(kind: .failed, message: "exporting the advertisement object failed: \(error.message)", operation: "org.bluez.LEAdvertisingManager1.RegisterAdvertisement", path: path.rawValue)
        }
    }

    private func released() {
        let first = state.withLock { s -> Bool in
            guard s.registered else { return false }
            s.registered = false
            s.released = true
            return true
        }
        if first { onRelease?() }
    }

    func registerWithBlueZ(timeout: Duration) async throws(BlueZError) {
        let op = "org.bluez.LEAdvertisingManager1.RegisterAdvertisement"
        guard state.withLock({ $0.export != nil }) else {
            throw BlueZError(kind: .doesNotExist, message: "the advertisement was unexported", operation: op)
        }
        do {
            _ = try await connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.LEAdvertisingManager1",
                                          member: "RegisterAdvertisement", arguments: [.objectPath(path), .properties([:])],
                                          timeout: timeout)
        } catch {
            throw BlueZError(error, operation: op, path: adapter.rawValue)
        }
        state.withLock {
            $0.registered = true
            $0.released = false
        }
    }

    /// Registers the exported advertisement again, e.g. after bluetoothd restarted or released it.
    public func reregister(allowedCaller: String, timeout: Duration = .seconds(25)) async throws(BlueZError) {
        state.withLock { $0.registered = false }
        self.allowedCaller = allowedCaller
        try await registerWithBlueZ(timeout: timeout)
    }

    /// `org.bluez.LEAdvertisingManager1.UnregisterAdvertisement(path)` (when registered), then
    /// removes the object. Idempotent; returns the unregistration error, if any.
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        let wasRegistered = state.withLock { s -> Bool in
            defer { s.registered = false }
            return s.registered
        }
        var failure: BlueZError?
        if wasRegistered {
            do {
                _ = try await connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.LEAdvertisingManager1",
                                              member: "UnregisterAdvertisement", arguments: [.objectPath(path)], timeout: timeout)
            } catch {
                failure = BlueZError(error, operation: "org.bluez.LEAdvertisingManager1.UnregisterAdvertisement", path: adapter.rawValue)
            }
        }
        unexport()
        return failure
    }

    func unexport() {
        state.withLock { s -> ExportHandle? in
            defer { s.export = nil }
            return s.export
        }?.unexport()
    }
}
