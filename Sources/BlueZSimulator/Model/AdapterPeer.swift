// AdapterPeer: the virtual radio. An adapter with a registered advertisement and GATT
// application, seen from the other adapters as a remote peripheral.

import Glibc

// MARK: - AdapterPeer

/// The peripheral side of the virtual radio: adapter `index` advertising what clients registered
/// with LEAdvertisingManager1 and serving what they registered with GattManager1. ATT operations
/// from a central are forwarded to the application's objects through the `ApplicationBridge`.
// Confined to the simulator's queue (see SimulatorCore); `@unchecked Sendable` only so scheduled
// closures running on that same queue may capture it.
final class AdapterPeer: RemotePeer, @unchecked Sendable {
    let index: Int
    unowned let core: SimulatorCore
    private(set) var database = GattDatabase(layout: [])
    /// Value handle → app owner + object path (characteristics), and descriptor handle likewise.
    private var sources: [UInt16: (owner: String, path: String)] = [:]
    /// Value handles with at least one subscribed central, and how many.
    private var subscribers: [UInt16: Int] = [:]
    /// Value handles whose characteristic exports `NotifyAcquired`.
    private var acquirable: Set<UInt16> = []
    /// The sockets characteristics handed over by `AcquireNotify`, by value handle, with their source.
    private var acquired: [UInt16: (socket: AcquiredSocket, owner: String, path: String)] = [:]
    /// Value handles whose characteristic exports `WriteAcquired`.
    private var writeAcquirable: Set<UInt16> = []
    /// The sockets characteristics handed over by `AcquireWrite`, by value handle.
    private var writeSockets: [UInt16: (socket: AcquiredSocket, owner: String, path: String)] = [:]
    /// Writes waiting for an `AcquireWrite` reply, by value handle.
    private var pendingSocketWrites: [UInt16: [(value: [UInt8], done: (Result<Void, ATTError>) -> Void)]] = [:]

    init(index: Int, core: SimulatorCore) {
        self.index = index
        self.core = core
    }

    private var adapter: AdapterState? { core.adapters[index] }

    var address: String { adapter?.address ?? "" }
    var mtu: UInt16 { core.maximumMTU }
    var connectionDelay: Duration { .milliseconds(2) }
    var discoveryDelay: Duration { .milliseconds(2) }

    var advertisement: AdvertisementSnapshot? {
        guard let a = adapter, a.powered,
              let (_, ad) = a.advertisements.sorted(by: { ($0.key.owner, $0.key.path) < ($1.key.owner, $1.key.path) }).last
        else { return nil }
        let includesName = ad.includes.contains("local-name")
        return AdvertisementSnapshot(
            address: a.address, addressType: "public", name: ad.localName ?? (includesName ? (a.alias ?? a.systemName) : nil),
            rssi: -45, txPower: ad.includes.contains("tx-power") ? (ad.txPower ?? 0) : ad.txPower,
            uuids: ad.serviceUUIDs, manufacturerData: ad.manufacturerData, serviceData: ad.serviceData,
            appearance: ad.appearance, connectable: ad.type == "peripheral", nameInScanResponse: true,
            flags: ad.type == "peripheral" ? 0x06 : nil, otherADStructures: ad.data)
    }

    /// Rebuilds the database from the adapter's applications (handles in registration-path order).
    func applicationsChanged() {
        guard let a = adapter else { return }
        let apps = a.applications.values.sorted { ($0.owner, $0.root) < ($1.owner, $1.root) }
        database = GattDatabase(layout: apps.flatMap(\.layout))
        sources.removeAll()
        acquirable.removeAll()
        writeAcquirable.removeAll()
        let notifyAcquired = Set(apps.flatMap { app in app.characteristics.filter(\.notifyAcquired).map(\.path) })
        let writeAcquired = Set(apps.flatMap { app in app.characteristics.filter(\.writeAcquired).map(\.path) })
        let owners = Dictionary(apps.flatMap { app in
            (app.services + app.characteristics + app.descriptors).map { ($0.path, app.owner) }
        }, uniquingKeysWith: { a, _ in a })
        for s in database.services {
            for c in s.characteristics {
                if let p = c.source, let o = owners[p] {
                    sources[c.valueHandle] = (o, p)
                    if notifyAcquired.contains(p) { acquirable.insert(c.valueHandle) }
                    if writeAcquired.contains(p) { writeAcquirable.insert(c.valueHandle) }
                }
                for d in c.descriptors { if let p = d.source, let o = owners[p] { sources[d.handle] = (o, p) } }
            }
        }
        closeStaleSockets()
    }

    /// An application went or moved: its acquired sockets close (as bluetoothd drops them).
    private func closeStaleSockets() {
        for (vh, entry) in acquired where sources[vh].map({ $0.owner != entry.owner || $0.path != entry.path }) ?? true {
            entry.socket.close()
            acquired[vh] = nil
        }
        for (vh, entry) in writeSockets where sources[vh].map({ $0.owner != entry.owner || $0.path != entry.path }) ?? true {
            entry.socket.close()
            writeSockets[vh] = nil
        }
    }

    /// Re-reports the advertisement to every scanning adapter.
    func advertisingChanged() {
        for a in core.adapters.values where a.index != index { core.report(self, to: a) }
    }

    /// The value handle served by application object `path` of `owner`.
    func valueHandle(owner: String, path: String) -> UInt16? {
        sources.first { $0.value.owner == owner && $0.value.path == path }?.key
    }

    // MARK: ATT forwarding

    private func options(_ central: CentralContext, offset: Int, type: String?) -> ServerRequestOptions {
        ServerRequestOptions(device: BlueZPath.device(adapter: index, address: central.address), link: "LE",
                             mtu: central.mtu, offset: UInt16(clamping: offset), type: type)
    }

    private func route(_ target: AttributeTarget) -> (owner: String, path: String, interface: String)? {
        switch target {
        case .characteristic(let vh): sources[vh].map { ($0.owner, $0.path, "org.bluez.GattCharacteristic1") }
        case .descriptor(let h): sources[h].map { ($0.owner, $0.path, "org.bluez.GattDescriptor1") }
        }
    }

    func read(_ target: AttributeTarget, offset: Int, central: CentralContext,
              _ done: @escaping (Result<[UInt8], ATTError>) -> Void) {
        guard let (owner, path, iface) = route(target), let bridge = core.bridge else { return done(.failure(.unlikelyError)) }
        let queue = core.queue
        let reply = UncheckedBox(done)
        bridge.readValue(owner: owner, path: path, interface: iface, options: options(central, offset: offset, type: nil)) { result in
            queue.async { reply.value(result.mapError { ATTError.fromApplication($0, permissionError: .readNotPermitted) }) }
        }
    }

    func write(_ target: AttributeTarget, value: [UInt8], offset: Int, type: String, central: CentralContext,
               _ done: @escaping (Result<Void, ATTError>) -> Void) {
        guard let (owner, path, iface) = route(target), let bridge = core.bridge else { return done(.failure(.unlikelyError)) }
        if case .characteristic(let vh) = target, type == "command", writeAcquirable.contains(vh) {
            return socketWrite(vh, owner: owner, path: path, value: value, central: central, done)
        }
        valueWrite(bridge, owner: owner, path: path, interface: iface, value: value, offset: offset, type: type, central: central, done)
    }

    /// `WriteValue` on the application's object.
    private func valueWrite(_ bridge: any ApplicationBridge, owner: String, path: String, interface: String, value: [UInt8],
                            offset: Int, type: String, central: CentralContext, _ done: @escaping (Result<Void, ATTError>) -> Void) {
        let queue = core.queue
        let reply = UncheckedBox(done)
        bridge.writeValue(owner: owner, path: path, interface: interface, value: value,
                          options: options(central, offset: offset, type: type)) { result in
            queue.async { reply.value(result.mapError { ATTError.fromApplication($0, permissionError: .writeNotPermitted) }) }
        }
    }

    /// A write without response to a characteristic exporting `WriteAcquired`, as bluetoothd
    /// handles it: sent on the socket the application handed over, the first one after an
    /// `AcquireWrite` (writes meanwhile wait); `WriteValue` when the application refuses it.
    private func socketWrite(_ vh: UInt16, owner: String, path: String, value: [UInt8], central: CentralContext,
                             _ done: @escaping (Result<Void, ATTError>) -> Void) {
        if let entry = writeSockets[vh] { return done(entry.socket.send(value) ? .success(()) : .failure(.unlikelyError)) }
        if pendingSocketWrites[vh] != nil { return pendingSocketWrites[vh]!.append((value, done)) }
        pendingSocketWrites[vh] = [(value, done)]
        guard let bridge = core.bridge else { return }
        onQueue(bridge.acquireWrite, owner: owner, path: path, central: central) { peer, result in
            peer.acquireWriteReplied(result, vh, owner: owner, path: path, central: central)
        }
    }

    /// Makes an `AcquireNotify`/`AcquireWrite` call (`acquire`) and hands its reply to `then` on
    /// the simulator's queue; a descriptor received after this peer went is closed.
    private func onQueue(_ acquire: (String, String, ServerRequestOptions, @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void) -> Void,
                         owner: String, path: String, central: CentralContext,
                         then: @escaping @Sendable (AdapterPeer, Result<Int32, BlueZErrorReply>) -> Void) {
        let queue = core.queue
        acquire(owner, path, options(central, offset: 0, type: nil)) { [weak self] result in
            queue.async { [weak self] in
                guard let peer = self else {
                    if case .success(let fd) = result { _ = Glibc.close(fd) }
                    return
                }
                then(peer, result)
            }
        }
    }

    private func acquireWriteReplied(_ result: Result<Int32, BlueZErrorReply>, _ vh: UInt16, owner: String, path: String,
                                     central: CentralContext) {
        let pending = pendingSocketWrites.removeValue(forKey: vh) ?? []
        switch result {
        case .success(let fd):
            let socket = AcquiredSocket.adopt(fd, queue: core.queue, onDatagram: { _ in }, onClose: { [weak self] in
                self?.writeSockets[vh] = nil
            })
            writeSockets[vh]?.socket.close()
            writeSockets[vh] = (socket, owner, path)
            for w in pending { w.done(socket.send(w.value) ? .success(()) : .failure(.unlikelyError)) }
        case .failure:
            guard let bridge = core.bridge else { return pending.forEach { $0.done(.failure(.unlikelyError)) } }
            for w in pending {
                valueWrite(bridge, owner: owner, path: path, interface: "org.bluez.GattCharacteristic1", value: w.value,
                           offset: 0, type: "command", central: central, w.done)
            }
        }
    }

    func subscriptionChanged(valueHandle: UInt16, enabled: Bool, central: CentralContext) {
        guard let (owner, path) = sources[valueHandle] else { return }
        let before = subscribers[valueHandle, default: 0]
        let after = max(0, before + (enabled ? 1 : -1))
        subscribers[valueHandle] = after
        if before == 0 && after > 0 { startNotifying(valueHandle, owner: owner, path: path, central: central) }
        if before > 0 && after == 0 { stopNotifying(valueHandle, owner: owner, path: path) }
    }

    /// The first central subscribed: `AcquireNotify` when the characteristic offers it (its
    /// socket's datagrams are notified as its `Value` changes are), else `StartNotify`; a failed
    /// `AcquireNotify` falls back to `StartNotify`, as bluetoothd does.
    private func startNotifying(_ vh: UInt16, owner: String, path: String, central: CentralContext) {
        guard let bridge = core.bridge else { return }
        guard acquirable.contains(vh) else { return bridge.setNotifying(owner: owner, path: path, enabled: true) }
        onQueue(bridge.acquireNotify, owner: owner, path: path, central: central) { peer, result in
            peer.acquireNotifyReplied(result, vh, owner: owner, path: path)
        }
    }

    private func acquireNotifyReplied(_ result: Result<Int32, BlueZErrorReply>, _ vh: UInt16, owner: String, path: String) {
        switch result {
        case .success(let fd):
            // Unsubscribed (or moved) while the call was out: close at once.
            guard subscribers[vh, default: 0] > 0, sources[vh].map({ $0.owner == owner && $0.path == path }) ?? false else {
                _ = Glibc.close(fd)
                return
            }
            let core = self.core
            let socket = AcquiredSocket.adopt(fd, queue: core.queue, onDatagram: { value in
                core.applicationValueChanged(owner: owner, path: path, value: value)
            }, onClose: { [weak self] in
                // The application closed its end: notifications through it are over.
                self?.acquired[vh] = nil
            })
            acquired[vh]?.socket.close()
            acquired[vh] = (socket, owner, path)
        case .failure:
            if subscribers[vh, default: 0] > 0 { core.bridge?.setNotifying(owner: owner, path: path, enabled: true) }
        }
    }

    /// The last central unsubscribed: the acquired socket closes (the application sees end of
    /// file), else `StopNotify`.
    private func stopNotifying(_ vh: UInt16, owner: String, path: String) {
        if let entry = acquired.removeValue(forKey: vh) {
            entry.socket.close()
        } else {
            core.bridge?.setNotifying(owner: owner, path: path, enabled: false)
        }
    }

    /// The central's Device1 under this adapter: created on connect, Connected follows the link.
    func connectionChanged(central: CentralContext, connected: Bool) {
        guard let a = adapter else { return }
        let device: DeviceState
        if let existing = a.devices[central.address] {
            device = existing
        } else {
            device = DeviceState(adapter: index, address: central.address)
            device.isCentralMirror = true
            a.devices[central.address] = device
            core.store.add(device.path, ["org.bluez.Device1": core.deviceProperties(device, ad: nil, adapter: a)])
        }
        device.link = connected ? .connected : .disconnected
        core.store.set(device.path, "org.bluez.Device1", "Connected", .bool(connected))
        if !connected {
            for (vh, n) in subscribers where n > 0 {
                if let (owner, path) = sources[vh] { stopNotifying(vh, owner: owner, path: path) }
            }
            subscribers.removeAll()
        }
    }
}

/// Carries a non-Sendable completion across the bridge back to the simulator's queue, where it
/// alone is called (the queue is the executor that makes this safe).
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
