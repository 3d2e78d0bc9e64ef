// PeripheralManager+AdvertisingInstances: the controller's advertising capabilities, and several
// advertisements at once up to its instances.

import BlueZ
import DBus
import Foundation
import Futures

extension PeripheralManager {
    // MARK: Capabilities

    /// What the adapter can advertise: `org.freedesktop.DBus.Properties.GetAll` of
    /// `org.bluez.LEAdvertisingManager1` on the adapter (read afresh, so the instance counts are
    /// current). Properties the release does not export read as nil (``AdvertisingCapabilities``).
    public func advertisingCapabilities(timeout: Duration = .seconds(5)) -> Future<AdvertisingCapabilities> {
        let promise = Promise<AdvertisingCapabilities>()
        let operation = "PeripheralManager.advertisingCapabilities (org.freedesktop.DBus.Properties.GetAll org.bluez.LEAdvertisingManager1)"
        enqueue("advertisingCapabilities", call: "org.freedesktop.DBus.Properties.GetAll") { [weak self] in
            guard let self else { return }
            let caps = try await readCapabilities(operation: operation, timeout: timeout)
            promise.success(caps)
        }.onFailure(context: .immediate) { promise.failure($0) }
        return promise.future.map(context: context) { $0 }
    }

    /// The capabilities read now from bluetoothd.
    func readCapabilities(operation: String, timeout: Duration = .seconds(5)) async throws -> AdvertisingCapabilities {
        let (_, adapter, connection) = try target(operation)
        let reply: Message
        do {
            reply = try await connection.bluezCall(path: adapter, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                                   arguments: [.string("org.bluez.LEAdvertisingManager1")], timeout: timeout)
        } catch {
            throw BlueCapError(error, operation: operation, path: adapter.rawValue)
        }
        var properties: [String: DBusValue] = [:]
        if case .dict(_, _, let entries)? = reply.body.first {
            for e in entries { if case .string(let k) = e.key { properties[k] = e.value.unwrapped } }
        }
        return AdvertisingCapabilities(properties, path: adapter)
    }

    // MARK: Several advertisements

    /// The advertisements added with ``addAdvertisement(_:)`` and not stopped.
    public var advertisingInstances: [AdvertisingInstance] { inner.withLock { $0.instances } }

    /// Advertises `advertisement` next to the others, in an instance of its own: checks it
    /// (`LocalAdvertisement.validate(against:operation:)` with the adapter's
    /// ``advertisingCapabilities(timeout:)``: data lengths, intervals, secondary channel, a free
    /// instance), then `org.bluez.LEAdvertisingManager1.RegisterAdvertisement`. The future
    /// fails with `.notPermitted` naming the instances in use when none is free, with
    /// `.invalidArguments` naming the limit when the advertisement does not fit.
    public func addAdvertisement(_ advertisement: LocalAdvertisement) -> Future<AdvertisingInstance> {
        let promise = Promise<AdvertisingInstance>()
        let operation = "PeripheralManager.addAdvertisement (org.bluez.LEAdvertisingManager1.RegisterAdvertisement)"
        enqueue("addAdvertisement", call: "org.bluez.LEAdvertisingManager1.RegisterAdvertisement") { [weak self] in
            guard let self else { return }
            let caps = try await readCapabilities(operation: operation)
            try advertisement.validate(against: caps, operation: operation)
            let (owner, adapter, connection) = try target(operation)
            let n = inner.withLock { s in s.instanceCounter += 1; return s.instanceCounter }
            let path = try ObjectPath("\(advertisementObject.rawValue)_i\(n)")
            let handle = try await advertisement.register(on: connection, adapter: adapter, path: path, allowedCaller: owner)
            let instance = AdvertisingInstance(handle: handle, context: context) { [weak self] stopped in
                self?.inner.withLock { $0.instances.removeAll { $0 === stopped } }
            }
            inner.withLock { $0.instances.append(instance) }
            promise.success(instance)
        }.onFailure(context: .immediate) { promise.failure($0) }
        return promise.future.map(context: context) { $0 }
    }
}
