// Peripheral: services that change while connected (Service Changed, re-resolution), reported
// through whenServicesChange(capacity:), and dropping the device's cached GATT database.
import BlueZ
import DBus
import Foundation
import Futures

extension Peripheral {
    // MARK: - Changes while connected

    /// Each change of the services while the link stays up: BlueZ removed or added
    /// `org.bluez.GattService1` objects under the device while `Device1.ServicesResolved` was
    /// true (what bluetoothd does on a Service Changed indication), or `ServicesResolved` went
    /// false and back to true with `Device1.Connected` true (BlueZ re-resolved). The services
    /// of a new connection are not a change (use ``discoverServices(_:timeout:)``), nor is their
    /// going away when the link drops.
    ///
    /// The removals and additions BlueZ makes within 100 ms come as one change. A Service Changed
    /// indication usually comes as two: bluetoothd removes the changed range's services at once,
    /// then adds what it read from the device over the air (5.66 and 5.82 against a Bumble peer
    /// swapping one service: the removal, then the addition). Removed services' ``Service`` objects and their
    /// characteristics are terminated before the change is pushed. The stream keeps the last `capacity` changes (`capacity` of the first
    /// call; at least 1) for a subscriber that comes later; older ones are dropped. It never ends
    /// while the peripheral exists, and finishes on ``terminate()``.
    public func whenServicesChange(capacity: Int = 10) -> FutureStream<ServicesChange> {
        state.withLock { s in
            if let p = s.servicesUpdates { return p.stream }
            let p = StreamPromise<ServicesChange>(capacity: max(1, capacity))
            s.servicesUpdates = p
            return p.stream
        }
    }

    /// The device's service objects in the tree now: path → UUID.
    private var currentServices: [ObjectPath: BLEUUID] {
        var out: [ObjectPath: BLEUUID] = [:]
        for p in tree.paths(withInterface: GattService1.interface, under: path) {
            guard let raw = tree.properties(at: p, interface: GattService1.interface),
                  let uuid = GattService1.Properties(raw, path: p).uuid.flatMap({ BLEUUID(string: $0) }) else { continue }
            out[p] = uuid
        }
        return out
    }

    /// Records the services of a link that resolved (or of a peripheral first seen resolved):
    /// changes are measured against them. `ServicesResolved` false with the link up means
    /// BlueZ is resolving again (or the link is going down): changes wait for the outcome.
    func servicesResolvedChanged(_ resolved: Bool) {
        forgetGattInventory()
        if resolved {
            let snapshot = state.withLock { s -> [ObjectPath: BLEUUID]? in
                defer { s.resolvingAgain = false }
                return s.serviceSnapshot
            }
            if snapshot == nil { adoptServiceSnapshot() } else { servicesMayHaveChanged(resolving: true) }
        } else if state.withLock({ $0.properties.connected != true }) {
            linkEndedForServices()
        } else {
            state.withLock { $0.resolvingAgain = true }
        }
    }

    /// Takes the services present now as the ones changes are measured against, unless the link
    /// already has them: when services resolve, and when ``discoverServices(_:timeout:)``
    /// succeeds (bluetoothd does not always signal `ServicesResolved = true`: README of the VM
    /// harness, lesson 11).
    func adoptServiceSnapshot() {
        let current = currentServices
        state.withLock { s in if s.serviceSnapshot == nil { s.serviceSnapshot = current } }
    }

    /// The link is down (or the device object gone): nothing to compare with any more.
    func linkEndedForServices() {
        state.withLock { s in
            s.serviceSnapshot = nil
            s.resolvingAgain = false
            s.gattInventory = .unknown
        }
    }

    /// How long after the first of a burst of `GattService1` objects appearing or going away the
    /// services are compared: bluetoothd removes and adds a changed range's objects in bursts.
    static let serviceChangeSettling: Duration = .milliseconds(100)

    /// A `GattService1` object appeared or went away under the device (owner thread): the
    /// comparison runs ``serviceChangeSettling`` later (on the manager's clock), so the
    /// removals and additions of one burst make one change.
    func serviceObjectsChanged() {
        // Only while the link is up with its services resolved and known: no timer (and no
        // report) for the objects a connection brings or a disconnection takes away.
        let schedule = state.withLock { s -> Bool in
            guard let snapshot = s.serviceSnapshot, !snapshot.isEmpty, s.linkIsUp, !s.terminated, !s.resolvingAgain,
                  !s.serviceDiffScheduled else { return false }
            s.serviceDiffScheduled = true
            return true
        }
        guard schedule else {
            // The first objects of a link that reported ServicesResolved before exporting them.
            let current = currentServices
            state.withLock { s in if s.serviceSnapshot?.isEmpty == true { s.serviceSnapshot = current } }
            return
        }
        after(Self.serviceChangeSettling) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.serviceDiffScheduled = false }
            self.servicesMayHaveChanged()
        }
    }

    /// Compares the device's service objects with the last snapshot and reports the difference
    /// (`resolving`: services just resolved again).
    func servicesMayHaveChanged(resolving: Bool = false) {
        let settled = state.withLock { $0.linkIsUp && !$0.terminated && !$0.resolvingAgain }
        guard settled || resolving else { return }
        let current = currentServices
        let taken = state.withLock { s -> (removed: [Service], chars: [Characteristic], routes: [ObjectTreeObservation],
                                           added: [ObjectPath], stream: StreamPromise<ServicesChange>?)? in
            guard let old = s.serviceSnapshot, old != current else { return nil }
            s.serviceSnapshot = current
            // The first objects of a link that reported ServicesResolved before exporting them.
            if old.isEmpty { return nil }
            let gone = old.filter { current[$0.key] != $0.value }
            var removed: [Service] = []
            var chars: [Characteristic] = []
            var routes: [ObjectTreeObservation] = []
            for (servicePath, uuid) in gone.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let cached = s.services.removeValue(forKey: servicePath)
                removed.append(cached?.uuid == uuid ? cached! : Service(uuid: uuid, path: servicePath, peripheral: self, isPrimary: true))
                let prefix = servicePath.rawValue + "/"
                for key in s.characteristics.keys where key.rawValue.hasPrefix(prefix) {
                    if let c = s.characteristics.removeValue(forKey: key) { chars.append(c) }
                    if let r = s.valueRoutes.removeValue(forKey: key) { routes.append(r) }
                }
                for key in s.descriptors.keys where key.rawValue.hasPrefix(prefix) { s.descriptors.removeValue(forKey: key) }
            }
            let added = current.filter { old[$0.key] != $0.value }.keys.sorted { $0.rawValue < $1.rawValue }
            return (removed, chars, routes, added, s.servicesUpdates)
        }
        guard let taken else { return }
        for r in taken.routes { r.cancel() }
        for c in taken.chars { c.linkLost(kind: .terminated) }
        let added = taken.added.compactMap { service(at: $0) }
        BlueZLog.debug("\(identifier) services changed: +\(added.map(\.uuid)) -\(taken.removed.map(\.uuid))")
        taken.stream?.success(ServicesChange(peripheral: self, added: added, removed: taken.removed))
    }

    // MARK: - Dropping the cache

    /// Drops bluetoothd's cached GATT database of the device so that the next connection
    /// discovers its services afresh (after a firmware update changed them without a Service
    /// Changed indication): calls `org.bluez.Adapter1.RemoveDevice`, the only call BlueZ has for
    /// it, which also takes the link down and removes the bond (pair again afterwards).
    ///
    /// Unlike ``forget()`` the peripheral stays: it stays in its manager's list, its
    /// ``Service`` and ``Characteristic`` objects are terminated, and a link that was up is taken
    /// down first as by ``disconnect()`` (the connection stream yields `.forceDisconnect`). bluetoothd needs the device's advertisement again before it can connect:
    /// scan (``CentralManager/startScanning(forServiceUUIDs:capacity:timeout:options:)`` reports
    /// this same peripheral), then ``connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
    /// and ``discoverServices(_:timeout:)`` read the database from the device.
    ///
    /// Completes once bluetoothd has removed the device object (5.55 answers `RemoveDevice` before
    /// it has), within `timeout`; fails with BlueZ's error or `.timeout`.
    public func forgetCachedServices(timeout: Duration = .seconds(10)) -> Future<Void> {
        let operation = "Peripheral.forgetCachedServices (org.bluez.Adapter1.RemoveDevice)"
        return removeDevice(operation, timeout: timeout) {}
            .flatMap(context: .immediate) { [self] _ in whenDeviceObjectGone(operation, timeout: timeout) }
            .map(context: context) { [self] _ in dropServiceObjects() }
    }

    /// Completes once the device's `Device1` object is gone from the tree; fails with `.timeout`.
    private func whenDeviceObjectGone(_ operation: String, timeout: Duration) -> Future<Void> {
        let promise = Promise<Void>()
        let gone: @Sendable () -> Bool = { [tree, path] in tree.interfaces(at: path)?[Device1.interface] == nil }
        let observation = tree.observe(path: path) { _ in if gone() { promise.success(()) } }
        let deadline = after(timeout) { [identifier] in
            promise.failure(PeripheralError(kind: .timeout, operation: operation, path: identifier, timeout: timeout,
                                            message: "bluetoothd answered RemoveDevice but kept the device object"))
        }
        promise.future.onComplete(context: .immediate) { _ in
            observation.cancel()
            deadline.cancel()
        }
        if gone() { promise.success(()) }
        return promise.future
    }

    /// Terminates every ``Service``/``Characteristic`` object (the device's database is gone).
    private func dropServiceObjects() {
        let (chars, routes) = state.withLock { s -> ([Characteristic], [ObjectTreeObservation]) in
            defer {
                s.services = [:]
                s.characteristics = [:]
                s.descriptors = [:]
                s.valueRoutes = [:]
                s.serviceSnapshot = nil
            }
            return (Array(s.characteristics.values), Array(s.valueRoutes.values))
        }
        for r in routes { r.cancel() }
        for c in chars { c.linkLost(kind: .terminated) }
    }
}
