// LocalAdvertisement: an org.bluez.LEAdvertisement1 object registered with
// org.bluez.LEAdvertisingManager1.

import DBus
import Foundation

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
    /// `Data`: AD structures to advertise as given, AD type → data (`a{yv}`). bluetoothd refuses
    /// the registration when a type is one it builds itself (flags, UUID lists, names, TX power,
    /// service or manufacturer data, appearance, …: `type_reject_list` in `src/shared/ad.c`).
    public var data: [UInt8: Data]
    /// `SolicitUUIDs`: services the advertiser asks a central to offer (AD types 0x14/0x1F/0x15).
    public var solicitUUIDs: [String] = []
    /// `DiscoverableTimeout` in seconds: after it, the advertisement drops the discoverable flag
    /// (bluetoothd sets Limited Discoverable meanwhile). Only with ``discoverable`` true;
    /// not longer than ``timeout``.
    public var discoverableTimeout: UInt16?
    /// `Duration` in seconds: how long this instance is on air each turn when several rotate.
    public var duration: UInt16?
    /// `Timeout` in seconds: bluetoothd releases the advertisement (`Release()`) after it.
    public var timeout: UInt16?
    /// `MinInterval` in milliseconds (20 … 10 485 759). BlueZ 5.66 reads it only with
    /// `--experimental`; 5.55 ignores it; 5.82 always reads it.
    public var minInterval: UInt32?
    /// `MaxInterval` in milliseconds (20 … 10 485 759, not below ``minInterval``); read as
    /// ``minInterval`` is.
    public var maxInterval: UInt32?
    /// `SecondaryChannel`: the PHY of extended advertising's secondary channel, one of the
    /// adapter's `SupportedSecondaryChannels`.
    public var secondaryChannel: SecondaryChannel?

    /// `SecondaryChannel`'s values.
    public enum SecondaryChannel: String, Sendable, Equatable, CaseIterable {
        /// `"1M"`.
        case oneM = "1M"
        /// `"2M"`.
        case twoM = "2M"
        /// `"Coded"`.
        case coded = "Coded"
    }

    /// An advertisement.
    public init(type: Kind = .peripheral, serviceUUIDs: [String] = [], localName: String? = nil,
                manufacturerData: [UInt16: Data] = [:], serviceData: [String: Data] = [:],
                includes: [String] = ["tx-power"], appearance: UInt16? = nil, discoverable: Bool? = true,
                txPower: Int16? = nil, data: [UInt8: Data] = [:], solicitUUIDs: [String] = [],
                discoverableTimeout: UInt16? = nil, duration: UInt16? = nil, timeout: UInt16? = nil,
                minInterval: UInt32? = nil, maxInterval: UInt32? = nil, secondaryChannel: SecondaryChannel? = nil) {
        self.solicitUUIDs = solicitUUIDs
        self.discoverableTimeout = discoverableTimeout
        self.duration = duration
        self.timeout = timeout
        self.minInterval = minInterval
        self.maxInterval = maxInterval
        self.secondaryChannel = secondaryChannel
        self.type = type
        self.serviceUUIDs = serviceUUIDs
        self.localName = localName
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.includes = includes
        self.appearance = appearance
        self.discoverable = discoverable
        self.txPower = txPower
        self.data = data
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
        if !data.isEmpty {
            let entries = data.sorted { $0.key < $1.key }.map { DBusValue.DictEntry(.byte($0.key), .variant($0.value.dbusValue)) }
            p.append(DBusProperty("Data", type: .dict(key: .byte, value: .variant), value: .dict(key: .byte, value: .variant, entries)))
        }
        if !solicitUUIDs.isEmpty {
            p.append(DBusProperty("SolicitUUIDs", type: .array(.string), value: solicitUUIDs.map { $0.lowercased() }.dbusValue))
        }
        if let discoverableTimeout { p.append(DBusProperty("DiscoverableTimeout", type: .uint16, value: .uint16(discoverableTimeout))) }
        if let duration { p.append(DBusProperty("Duration", type: .uint16, value: .uint16(duration))) }
        if let timeout { p.append(DBusProperty("Timeout", type: .uint16, value: .uint16(timeout))) }
        if let minInterval { p.append(DBusProperty("MinInterval", type: .uint32, value: .uint32(minInterval))) }
        if let maxInterval { p.append(DBusProperty("MaxInterval", type: .uint32, value: .uint32(maxInterval))) }
        if let secondaryChannel { p.append(DBusProperty("SecondaryChannel", type: .string, value: .string(secondaryChannel.rawValue))) }
        return p
    }

    /// (`package`: BlueCapKit's API carries no D-Bus type; it registers through
    /// `PeripheralManager`.) Exports the advertisement at `path` (answering only `allowedCaller`), then calls
    /// `org.bluez.LEAdvertisingManager1.RegisterAdvertisement(path, {})` on `adapter`.
    /// `onRelease` runs (on the connection's thread) when bluetoothd calls `Release()`.
    package func register(on connection: Connection, adapter: ObjectPath, path: ObjectPath = "/org/bluecap/advertisement0",
                         allowedCaller: String, timeout: Duration = .seconds(25),
                         onRelease: (@Sendable () -> Void)? = nil) async throws(BlueZError) -> AdvertisementHandle {
        let handle = AdvertisementHandle(advertisement: self, connection: connection, adapter: adapter, path: path, onRelease: onRelease)
        try await handle.registration.exportAndRegister(allowedCaller: allowedCaller, timeout: timeout)
        return handle
    }

    /// The registration's calls: the `LEAdvertisement1` object at `path` (its `Release()` ends the
    /// registration, then runs `onRelease`), `RegisterAdvertisement(path, {})` and
    /// `UnregisterAdvertisement(path)` on `adapter`.
    func calls(adapter: ObjectPath, path: ObjectPath, onRelease: (@Sendable () -> Void)?) -> RegistrationCalls {
        let manager = "org.bluez.LEAdvertisingManager1", properties = self.properties
        return RegistrationCalls(
            path: path,
            export: { registration, caller throws(BlueZError) in
                let release = DBusMethod("Release") { [weak registration] _, r in
                    r.succeed()
                    if registration?.released() == true { onRelease?() }
                }
                do throws(DBusExportError) {
                    return [try registration.connection.export([DBusInterface(name: "org.bluez.LEAdvertisement1", methods: [release],
                                                                              properties: properties)],
                                                               at: path, allowedCaller: caller)]
                } catch {
                    throw BlueZError(kind: .failed, message: "exporting the advertisement object failed: \(error.message)",
                                     operation: "org.bluez.LEAdvertisingManager1.RegisterAdvertisement", path: path.rawValue)
                }
            },
            register: RegistrationCalls.bluez(adapter, manager, "RegisterAdvertisement", [.objectPath(path), .properties([:])]),
            unregister: RegistrationCalls.bluez(adapter, manager, "UnregisterAdvertisement", [.objectPath(path)]))
    }
}

// MARK: - AdvertisementHandle

/// A registered ``LocalAdvertisement``: its ``registration`` (``Registration``) with
/// `org.bluez.LEAdvertisingManager1`. ``unregister(timeout:)`` calls `UnregisterAdvertisement`
/// and then removes the object.
public final class AdvertisementHandle: Sendable {
    /// The advertisement.
    public let advertisement: LocalAdvertisement
    /// The adapter it is registered on.
    public let adapter: ObjectPath
    /// The object path.
    public let path: ObjectPath
    /// The export and the registration with `org.bluez.LEAdvertisingManager1`.
    public let registration: Registration

    init(advertisement: LocalAdvertisement, connection: Connection, adapter: ObjectPath, path: ObjectPath,
         onRelease: (@Sendable () -> Void)?) {
        self.advertisement = advertisement
        self.adapter = adapter
        self.path = path
        registration = Registration(connection: connection, calls: advertisement.calls(adapter: adapter, path: path, onRelease: onRelease))
    }

    /// Whether bluetoothd holds the advertisement: registered, not released, not unregistered.
    public var isRegistered: Bool { registration.isRegistered }

    /// Whether bluetoothd called `Release()` since the last registration.
    public var wasReleased: Bool { registration.wasReleased }

    /// The unique name allowed to call the object; "" allows no one.
    public var allowedCaller: String? { registration.allowedCaller }

    /// Exports the object (without registering it).
    func export(allowedCaller: String) throws(BlueZError) { try registration.export(allowedCaller: allowedCaller) }

    /// Calls `org.bluez.LEAdvertisingManager1.RegisterAdvertisement(path, {})` again with the
    /// exported object, e.g. after bluetoothd restarted or released it.
    public func reregister(allowedCaller: String, timeout: Duration = .seconds(25)) async throws(BlueZError) {
        try await registration.reregister(allowedCaller: allowedCaller, timeout: timeout)
    }

    /// Calls `org.bluez.LEAdvertisingManager1.UnregisterAdvertisement(path)` (when registered),
    /// then removes the object. Idempotent; returns the unregistration error, if any.
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        await registration.unregister(timeout: timeout)
    }
}
