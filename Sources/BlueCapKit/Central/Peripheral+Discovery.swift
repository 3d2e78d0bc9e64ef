// Peripheral: services, discovery against the object tree, GATT object caches.
import BlueZ
import DBus
import Foundation
import Futures

extension Peripheral {
    // MARK: - Services

    /// The device's services (`org.bluez.GattService1` objects under the device), in handle order.
    /// Empty until BlueZ has resolved services after a connection, and after ``terminate()``.
    public var services: [Service] {
        tree.paths(withInterface: GattService1.interface, under: path).compactMap { service(at: $0) }
    }

    /// The service with `uuid`, if resolved.
    public func service(_ uuid: BLEUUID) -> Service? { services.first { $0.uuid == uuid } }

    /// Waits until BlueZ has resolved the device's services (`Device1.ServicesResolved`) AND the
    /// `org.bluez.GattService1` objects exist (BlueZ may report resolved before exporting them);
    /// with `uuids`, until each of those services exists. Subscribes before checking, so nothing
    /// is missed. Fails with `.notConnected` (`.terminated` after ``terminate()``), `.disconnected`, `.notFound` (resolved but a
    /// requested service is missing when `timeout` fires) or `.timeout`.
    public func discoverServices(_ uuids: [BLEUUID]? = nil, timeout: Duration = .seconds(15)) -> Future<Peripheral> {
        let operation = "Peripheral.discoverServices (Device1.ServicesResolved)"
        let promise = Promise<Peripheral>()
        if let down = linkDown {
            promise.failure(PeripheralError(kind: down, operation: operation, path: identifier))
            return promise.future
        }
        let missing: @Sendable () -> [BLEUUID]? = { [weak self] in
            guard let self, self.servicesResolved else { return nil }
            let present = Set(self.services.map(\.uuid))
            if let uuids { return uuids.filter { !present.contains($0) } }
            return present.isEmpty ? [] : []
        }
        wait(timeout: timeout, check: { [weak self] in
            guard let self, let missing = missing() else { return false }
            if uuids == nil && self.services.isEmpty { return false }
            guard missing.isEmpty else { return false }
            // Without UUIDs: every GATT object bluetoothd holds for the device, not only the
            // first to be signalled (Peripheral+GattInventory).
            if uuids == nil && !self.gattObjectsComplete(under: self.path) { return false }
            self.adoptServiceSnapshot()
            promise.success(self)
            return true
        }, fail: { promise.failure($0) }, onTimeout: { [weak self, identifier] in
            if uuids == nil, let self, self.servicesResolved, !self.services.isEmpty {
                // Some object bluetoothd listed never came: go on with the services there are.
                BlueZLog.debug("\(identifier) discoverServices: not every GATT object bluetoothd listed appeared within \(timeout); going on with \(self.services.count) service(s)")
                self.adoptServiceSnapshot()
                promise.success(self)
            } else if let m = missing(), !m.isEmpty || uuids == nil {
                promise.failure(PeripheralError(kind: .notFound, operation: operation, path: identifier,
                                                message: uuids == nil ? "services resolved but no GATT service objects appeared"
                                                    : "services not found: \(m.map(\.description).joined(separator: ", "))"))
            } else {
                promise.failure(PeripheralError(kind: .timeout, operation: operation, path: identifier, timeout: timeout,
                                                message: "ServicesResolved did not turn true"))
            }
        })
        return promise.future
    }

    // MARK: - Caches

    /// The ``Service`` for the object at `path` (one object per path and UUID).
    func service(at path: ObjectPath) -> Service? {
        guard let raw = tree.properties(at: path, interface: GattService1.interface) else { return nil }
        let props = GattService1.Properties(raw, path: path)
        guard let uuid = props.uuid.flatMap({ BLEUUID(string: $0) }) else { return nil }
        return state.withLock { s in
            guard !s.terminated else { return nil }
            if let cached = s.services[path], cached.uuid == uuid { return cached }
            let created = Service(uuid: uuid, path: path, peripheral: self, isPrimary: props.primary ?? true)
            s.services[path] = created
            return created
        }
    }

    /// The ``Characteristic`` for the object at `path`.
    func characteristic(at path: ObjectPath, service: Service) -> Characteristic? {
        guard let raw = tree.properties(at: path, interface: GattCharacteristic1.interface) else { return nil }
        let props = GattCharacteristic1.Properties(raw, path: path)
        guard let uuid = props.uuid.flatMap({ BLEUUID(string: $0) }) else { return nil }
        let made = state.withLock { s -> (Characteristic, Bool)? in
            guard !s.terminated else { return nil }
            if let cached = s.characteristics[path], cached.uuid == uuid { return (cached, false) }
            let created = Characteristic(uuid: uuid, path: path, service: service, properties: props)
            s.characteristics[path] = created
            return (created, true)
        }
        // A terminated peripheral follows nothing: no GATT objects (and no value routes) for it.
        guard let (characteristic, isNew) = made else { return nil }
        if isNew {
            // Its notifications (lone `Value` changes) come straight from the tree, not through
            // the device's subtree observer. The route holds the characteristic strongly: it
            // lives no longer than the characteristic's entry in `state.characteristics` (it is
            // cancelled when that entry is replaced or dropped, see `terminate()`), and a weak
            // reference would move every retain and release of the characteristic (several per
            // notification) to the runtime's slow side-table path.
            let route = tree.observeValue(at: path) { [characteristic] data in
                characteristic.received(data, via: .propertiesChanged)
            }
            let replaced = state.withLock { s -> ObjectTreeObservation? in
                guard s.characteristics[path] === characteristic else { return route }
                defer { s.valueRoutes[path] = route }
                return s.valueRoutes[path]
            }
            replaced?.cancel()
        }
        return characteristic
    }

    /// The ``Descriptor`` for the object at `path`.
    func descriptor(at path: ObjectPath, characteristic: Characteristic) -> Descriptor? {
        guard let raw = tree.properties(at: path, interface: GattDescriptor1.interface) else { return nil }
        let props = GattDescriptor1.Properties(raw, path: path)
        guard let uuid = props.uuid.flatMap({ BLEUUID(string: $0) }) else { return nil }
        return state.withLock { s in
            guard !s.terminated else { return nil }
            if let cached = s.descriptors[path], cached.uuid == uuid { return cached }
            let created = Descriptor(uuid: uuid, path: path, characteristic: characteristic)
            s.descriptors[path] = created
            return created
        }
    }

    /// Whether the link is up as far as we know.
    var linkIsUp: Bool { state.withLock { $0.linkIsUp && !$0.terminated } }

    /// Why an operation cannot start, nil while the link is up (``linkIsUp``), read under one
    /// lock: `.terminated` after ``terminate()``, else
    /// `.notConnected`.
    var linkDown: PeripheralError.Kind? {
        state.withLock { s in s.terminated ? .terminated : (s.linkIsUp ? nil : .notConnected) }
    }

    /// Restarts notifications that were on when the link dropped (after a reconnection).
    func resubscribeNotifications() {
        let pending = state.withLock { s in s.characteristics.values.filter { $0.wantsResubscription } }
        guard !pending.isEmpty else { return }
        discoverServices().onComplete(context: .immediate) { result in
            for c in pending {
                c.startNotifying(timeout: .seconds(10), resubscribeOnReconnect: true, byApp: false).onComplete(context: .immediate) { r in
                    switch r {
                    case .success: c.resubscribed()
                    case .failure(let error): BlueZLog.debug("\(c.path) re-subscription after reconnect failed: \(error)")
                    }
                }
            }
            if case .failure(let e) = result { BlueZLog.debug("re-subscription: \(e)") }
        }
    }
}
