// SimulatorCore+Connection: Device1.Connect/Disconnect, the link state machine, ServicesResolved,
// Device1 settings (Alias, Trusted, Blocked). The GATT objects a connection publishes: GattPublisher.

// MARK: - Connection

extension SimulatorCore {
    func device(at path: String) -> DeviceState? {
        // dev path: /org/bluez/hciN/dev_XX...; at most one dictionary probe per adapter.
        for a in adapters.values {
            guard path.hasPrefix(a.path + "/dev_") else { continue }
            let tail = path.dropFirst(a.path.count + 5)
            return a.devices[tail.split(separator: "_").joined(separator: ":")]
        }
        return nil
    }

    /// Whether `device`'s peer can be reached now (in range, advertising connectable, powered).
    func reachable(_ device: DeviceState) -> RemotePeer? {
        guard let a = adapters[device.adapter], a.powered, let peer = device.peer else { return nil }
        guard peersInRange(of: a).contains(where: { $0 === peer }), let ad = peer.advertisement, ad.connectable else { return nil }
        return peer
    }

    /// `Device1.Connect()`. Replies when the link is up, before service discovery, and (as real
    /// bluetoothd, whose property changes go out from an idle handler) before the Connected=true
    /// signal; then GATT objects are published and ServicesResolved turns true.
    public func connect(device path: String, _ done: @escaping (Result<Void, BlueZErrorReply>) -> Void) {
        guard let device = device(at: path), let a = adapters[device.adapter] else { return done(.failure(.doesNotExist)) }
        guard a.powered else { return done(.failure(.notReady)) }
        switch device.link {
        case .connected where device.attChannelPending: return done(.failure(.inProgress))
        case .connected: return done(.success(()))
        case .connecting, .disconnecting: return done(.failure(.inProgress))
        case .disconnected where device.attTeardownWork != nil: return done(.failure(.failed("Operation already in progress")))
        case .disconnected: break
        }
        device.temporaryWork?.cancel()
        let full = a.connectionLimit.map { limit in a.devices.values.filter { $0.link != .disconnected }.count >= limit } ?? false
        device.link = .connecting
        device.pendingConnects.append(done)
        guard !full, let peer = reachable(device) else {
            // Unreachable, or the controller's links are all taken: the LE Create Connection is
            // cancelled by the host after its timeout, as bluetoothd reports it.
            device.connectWork = clock.schedule(after: connectFailureDelay) { [weak self, weak device] in
                guard let self, let device, device.link == .connecting else { return }
                device.link = .disconnected
                self.finishConnect(device, .failure(.failed("le-connection-abort-by-local")))
            }
            return
        }
        // A zero delay links up inside the call: calls queued behind it (a Disconnect) see the link.
        guard peer.connectionDelay > .zero else { return linkUp(device, peer: peer) }
        device.connectWork = clock.schedule(after: peer.connectionDelay) { [weak self, weak device] in
            guard let self, let device, device.link == .connecting else { return }
            self.linkUp(device, peer: peer)
        }
    }

    /// Limits `adapter`'s simulated controller to `limit` LE links (connected or connecting; nil:
    /// no limit). A `Device1.Connect` past it fails as real bluetoothd reports a controller out of
    /// connection resources: `org.bluez.Error.Failed` "le-connection-abort-by-local", after the
    /// connect-failure delay.
    public func setConnectionLimit(_ limit: Int?, adapter: Int) {
        adapters[adapter]?.connectionLimit = limit
    }

    /// Adds `offset` dB to every RSSI `adapter` hears from now on (a controller farther from the
    /// peers, or nearer): with several adapters, which one hears a device best.
    public func setRSSIOffset(_ offset: Int16, adapter: Int) {
        adapters[adapter]?.rssiOffset = offset
    }

    private func finishConnect(_ device: DeviceState, _ result: Result<Void, BlueZErrorReply>) {
        let waiting = device.pendingConnects
        device.pendingConnects.removeAll()
        for reply in waiting { reply(result) }
    }

    func central(for device: DeviceState) -> CentralContext {
        CentralContext(adapter: device.adapter, address: adapters[device.adapter]?.address ?? "",
                       mtu: min(maximumMTU, device.peer?.mtu ?? 23))
    }

    private func linkUp(_ device: DeviceState, peer: RemotePeer) {
        device.link = .connected
        guard attChannelDelay > .zero else { return attChannelUp(device, peer: peer) }
        // Connected at the controller's event; the Connect waits for the ATT channel.
        device.attChannelPending = true
        store.set(device.path, "org.bluez.Device1", "Connected", .bool(true))
        device.connectWork = clock.schedule(after: attChannelDelay) { [weak self, weak device] in
            guard let self, let device, device.link == .connected, device.attChannelPending else { return }
            device.attChannelPending = false
            self.attChannelUp(device, peer: peer)
        }
    }

    /// The ATT channel is up: the Connect answered, the peer told, the services published after
    /// the discovery delay.
    private func attChannelUp(_ device: DeviceState, peer: RemotePeer) {
        finishConnect(device, .success(()))
        if connectedSignalWithheld {
            store.setSilently(device.path, "org.bluez.Device1", "Connected", .bool(true))
        } else {
            store.set(device.path, "org.bluez.Device1", "Connected", .bool(true))
        }
        peer.connectionChanged(central: central(for: device), connected: true)
        if let early = servicesResolvedEarly {
            setServicesResolved(device, true)
            device.connectWork = clock.schedule(after: early) { [weak self, weak device] in
                guard let self, let device, device.link == .connected else { return }
                self.publishGatt(device)
            }
        } else {
            device.connectWork = clock.schedule(after: peer.discoveryDelay) { [weak self, weak device] in
                guard let self, let device, device.link == .connected else { return }
                self.publishGatt(device)
                self.setServicesResolved(device, true)
            }
        }
    }

    func setServicesResolved(_ device: DeviceState, _ on: Bool) {
        device.servicesResolved = on
        store.set(device.path, "org.bluez.Device1", "ServicesResolved", .bool(on))
    }

    /// `Device1.Disconnect()`: ServicesResolved=false, the reply, then GATT objects removed and
    /// Connected=false. Real bluetoothd answers once the kernel reports the link down and emits
    /// Connected=false later from an idle handler (dbus-monitor in the VM: ServicesResolved=false,
    /// method return, Connected=false, every round). A pending Connect fails with
    /// "br-connection-canceled" as in bluetoothd.
    public func disconnect(device path: String, _ done: @escaping (Result<Void, BlueZErrorReply>) -> Void) {
        guard let device = device(at: path) else { return done(.failure(.doesNotExist)) }
        switch device.link {
        case .disconnected, .disconnecting:
            done(.success(()))
        case .connecting:
            device.connectWork?.cancel()
            device.link = .disconnected
            finishConnect(device, .failure(.failed("br-connection-canceled")))
            done(.success(()))
        case .connected:
            guard disconnectDelay > .zero else { return linkLost(device, reason: nil) { done(.success(())) } }
            // bluetoothd's DISCONNECT_TIMER: the link stays up (a Connect meanwhile is answered
            // at once, as already connected) until the delay ends or the link drops first.
            device.pendingDisconnects.append(done)
            guard device.disconnectWork == nil else { return }
            device.disconnectWork = clock.schedule(after: disconnectDelay) { [weak self, weak device] in
                guard let self, let device else { return }
                device.disconnectWork = nil
                self.linkLost(device, reason: nil)
            }
        }
    }

    /// The link went down (local Disconnect, remote drop, power off): bluetoothd's order.
    /// `unresolved` runs once ServicesResolved=false is out and before anything else (where
    /// bluetoothd sends a local Disconnect's reply).
    func linkLost(_ device: DeviceState, reason: BlueZErrorReply?, unresolved: () -> Void = {}) {
        device.connectWork?.cancel()
        if device.link == .connecting {
            device.link = .disconnected
            finishConnect(device, .failure(reason ?? .failed("le-connection-abort-by-local")))
            return unresolved()
        }
        guard device.link == .connected else { return unresolved() }
        if device.attChannelPending {
            // Down before the ATT channel came up: the Connect fails, the peer never saw the link.
            device.attChannelPending = false
            device.link = .disconnected
            finishConnect(device, .failure(reason ?? .failed("le-connection-abort-by-local")))
            store.set(device.path, "org.bluez.Device1", "Connected", .bool(false))
            return unresolved()
        }
        device.isEncrypted = false
        device.link = .disconnecting
        attLinkEnded(device)
        if device.servicesResolved { setServicesResolved(device, false) }
        unresolved()
        // Disconnects that waited for the delay (or for this drop) are answered with the link down.
        device.disconnectWork?.cancel()
        device.disconnectWork = nil
        let waiting = device.pendingDisconnects
        device.pendingDisconnects = []
        for reply in waiting { reply(.success(())) }
        let peer = device.peer
        let ctx = central(for: device)
        for handle in device.notifySessions.keys.sorted() where !(device.notifySessions[handle]?.isEmpty ?? true) {
            peer?.subscriptionChanged(valueHandle: handle, enabled: false, central: ctx)
        }
        unpublishGatt(device)
        device.link = .disconnected
        if attTeardownDelay > .zero {
            device.attTeardownWork?.cancel()
            device.attTeardownWork = clock.schedule(after: attTeardownDelay) { [weak device] in device?.attTeardownWork = nil }
        }
        store.set(device.path, "org.bluez.Device1", "Connected", .bool(false))
        peer?.connectionChanged(central: ctx, connected: false)
        // Neither paired nor trusted: temporary again, removed TemporaryTimeout from now.
        if !device.isCentralMirror, !isPaired(device.path),
           store.property(device.path, "org.bluez.Device1", "Trusted") != .bool(true) {
            armTemporaryRemoval(device)
        }
    }

    /// Fault: the remote drops the link (supervision timeout): BlueZ order, no caller to answer.
    public func dropLink(device path: String) {
        guard let device = device(at: path) else { return }
        linkLost(device, reason: .failed("le-connection-abort-by-remote"))
    }

    /// The device object paths on `adapter` (sorted).
    public func devicePaths(adapter index: Int) -> [String] {
        adapters[index]?.devices.values.map(\.path).sorted() ?? []
    }
}

// MARK: - Device properties

extension SimulatorCore {
    /// `Properties.Set` on Device1: Alias, Trusted, Blocked.
    public func setDeviceProperty(_ path: String, _ name: String, _ value: PropertyValue) throws(BlueZErrorReply) {
        guard let device = device(at: path) else { throw .doesNotExist }
        switch (name, value) {
        case ("Alias", .string(let alias)):
            let fallback = store.property(path, "org.bluez.Device1", "Name")?.stringValue
                ?? device.address.split(separator: ":").joined(separator: "-")
            store.set(path, "org.bluez.Device1", "Alias", .string(alias.isEmpty ? fallback : alias))
        case ("Trusted", .bool(let on)):
            store.set(path, "org.bluez.Device1", "Trusted", .bool(on))
        case ("Blocked", .bool(let on)):
            if on, device.link != .disconnected { linkLost(device, reason: nil) }
            store.set(path, "org.bluez.Device1", "Blocked", .bool(on))
        default:
            throw .invalidArguments
        }
    }
}
