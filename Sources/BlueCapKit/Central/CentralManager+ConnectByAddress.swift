// CentralManager+ConnectByAddress: a peripheral from its address, connected whether or not BlueZ
// has seen it (Adapter1.ConnectDevice, else a discovery for the address, then Device1.Connect).
import BlueZ
import DBus
import Foundation
import Futures

extension CentralManager {
    /// Connects the peripheral with `address` (`C0:FF:EE:00:00:01`, any case) on the manager's
    /// adapter, whether or not BlueZ has seen it, and completes with it once the link is up.
    ///
    /// - When BlueZ has a device object for the address (seen in a scan, paired, connected
    ///   before), it is connected directly through ``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
    ///   (`org.bluez.Device1.Connect`).
    /// - Otherwise `org.bluez.Adapter1.ConnectDevice` (`{"Address", "AddressType"}`) connects it
    ///   without a discovery. That method exists only when bluetoothd runs with `--experimental`
    ///   (`-E`); whether it does is learned from its first answer (`UnknownMethod` when it does
    ///   not) and kept per adapter for the session. Once BlueZ answers with the device, the
    ///   peripheral's own `connect` machinery takes over (it reports the link up at once).
    /// - Without `ConnectDevice`, a discovery (`SetDiscoveryFilter` with transport "le" and the
    ///   address as pattern, then `StartDiscovery`) runs until the address is heard, then is
    ///   stopped (`StopDiscovery`) and the device connected with `Device1.Connect`. A scan of
    ///   this manager's on the same adapter is not disturbed: while both run, bluetoothd's filter
    ///   is widened to every LE device (the scan filters again on its side), and the discovery
    ///   is stopped only when neither needs it.
    ///
    /// Two calls for the same address at once share one operation and complete with the same
    /// ``Peripheral``. Fails with ``BlueCapError/invalidAddress(_:)`` for a malformed address
    /// (nothing is sent), ``BlueCapError/notPoweredOn(_:)`` when the adapter is off (or turns
    /// off meanwhile), and `.timeout` after `timeout` with a message naming the address and the
    /// adapter and saying whether `ConnectDevice` was available and how to enable it.
    ///
    /// Stop waiting and the operation stops: when every caller's future is abandoned (a
    /// `cancelToken` cancelled on each subscription, a `timeout(after:)` that fired, a cancelled
    /// `await` of the future's `value`), the discovery it started is stopped and a pending
    /// connection cancelled (`Device1.Disconnect`).
    ///
    /// ```swift
    /// let sensor = try await manager.connect(address: "C0:FF:EE:00:00:01", timeout: .seconds(20)).value
    /// try await sensor.discoverServices().value
    /// ```
    ///
    /// To follow the link afterwards (drops, reconnection), call `connect(...)` on the peripheral:
    /// on a connected peripheral its stream starts with `.connect` and no call is made.
    public func connect(address: String, addressType: PeripheralAddressType = .public,
                        timeout: Duration = .seconds(30)) -> Future<Peripheral> {
        let promise = Promise<Peripheral>()
        guard let normalized = Self.normalizedAddress(address) else {
            promise.failure(CentralManagerError.invalidAddress(address))
            return promise.future
        }
        guard connection != nil, let tracker else {
            promise.failure(busUnavailable)
            return promise.future
        }
        let snapshot = tracker.snapshot
        guard snapshot.state == .poweredOn, let adapter = snapshot.adapter else {
            promise.failure(CentralManagerError.notPoweredOn(snapshot.state))
            return promise.future
        }
        let key = AddressConnect.key(adapter: adapter, address: normalized)
        let now = clock.now
        let (operation, id, created) = inner.withLock { s -> (AddressConnect, Int, Bool) in
            if let running = s.addressConnects[key] { return (running, running.add(promise), false) }
            let op = AddressConnect(address: normalized, addressType: addressType, adapter: adapter, timeout: timeout, now: now)
            s.addressConnects[key] = op
            return (op, op.add(promise), true)
        }
        promise.onAbandoned { [weak self, weak operation] in
            guard let self, let operation, operation.remove(id) else { return }
            BlueZLog.debug("connect(address: \(normalized)): every caller stopped waiting; cancelling")
            self.end(operation, with: nil)
        }
        if created { run(operation) }
        return promise.future
    }

    /// `address` in upper case when it is six hexadecimal byte pairs separated by colons.
    static func normalizedAddress(_ address: String) -> String? {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return address.uppercased()
    }

    // MARK: - The steps

    /// Arms the deadline, then connects the known device, asks `ConnectDevice`, or searches.
    private func run(_ op: AddressConnect) {
        let timer = after(op.timeout) { [weak self, weak op] in
            guard let self, let op else { return }
            let s = op.state.withLock { $0 }
            let connectDevice = s.connectDevice ?? (s.connectDevicePending ? true : nil) ?? self.session.connectDeviceSupport.available(
                owner: self.tree?.status.owner, adapter: op.adapter.rawValue)
            self.end(op, with: .failure(CentralManagerError.addressConnectTimedOut(
                op.address, adapter: Adapter1.name(of: op.adapter), timeout: op.timeout,
                connectDevice: connectDevice, knownDevice: s.knownDevice)))
        }
        let armed = op.state.withLock { s -> Bool in
            guard !s.finished else { return false }
            s.timer = timer
            return true
        }
        guard armed else { timer.cancel(); return }
        if let path = devicePath(op) {
            op.state.withLock { $0.knownDevice = true }
            return connectKnown(op, path: path)
        }
        let available = session.connectDeviceSupport.available(owner: tree?.status.owner, adapter: op.adapter.rawValue)
        if available == false { return search(op) }
        askConnectDevice(op)
    }

    /// The device object whose `Device1.Address` is `op`'s address under its adapter (one of
    /// `op`'s address type first), if BlueZ has one: a bonded privacy peer's identity address
    /// finds the object bluetoothd made for the private address it was found at.
    func devicePath(_ op: AddressConnect) -> ObjectPath? {
        tree?.devicePaths(withAddress: op.address, addressType: op.addressType.rawValue, under: op.adapter).first
    }

    /// The path bluetoothd gives the device of `op`'s address (`…/hci0/dev_C0_FF_EE_00_00_01`).
    private func expectedDevicePath(_ op: AddressConnect) -> ObjectPath? {
        try? ObjectPath(op.adapter.rawValue + "/dev_" + op.address.replacingOccurrences(of: ":", with: "_"))
    }

    /// A connection slot of the adapter (``ConnectionSlots``), then `ConnectDevice`: the link it
    /// makes takes a slot as `Device1.Connect` would. A slot that does not come in time fails
    /// `op` with `.noConnectionSlot`.
    private func askConnectDevice(_ op: AddressConnect) {
        guard let device = expectedDevicePath(op), !op.isFinished else { return }
        op.state.withLock { $0.slotDevice = device }
        session.connectionSlots.acquire(device) { [weak self] granted in
            guard let self else { return }
            switch granted {
            case .success where !op.isFinished:
                self.sendConnectDevice(op)
            case .success:
                self.releaseSlot(op)
            case .failure(let error):
                self.releaseSlot(op)
                self.end(op, with: .failure(error))
            }
        }
    }

    /// Gives back the slot `op` asked for `ConnectDevice` (or its place in the queue).
    func releaseSlot(_ op: AddressConnect) {
        let device = op.state.withLock { s -> ObjectPath? in
            defer { s.slotDevice = nil }
            return s.slotDevice
        }
        if let device { session.connectionSlots.release(device) }
    }

    /// `org.bluez.Adapter1.ConnectDevice`; its answer decides the next step. Every answer but
    /// a link gives the slot back first.
    private func sendConnectDevice(_ op: AddressConnect) {
        guard let connection, !op.isFinished else { return releaseSlot(op) }
        let owner = tree?.status.owner
        let support = session.connectDeviceSupport
        let callTimeout = clock.backstop(for: max(op.deadline - clock.now, .seconds(1)))
        op.state.withLock { $0.connectDevicePending = true }
        Adapter1(connection: connection, path: op.adapter).connectDevice(
            address: op.address, addressType: op.addressType.rawValue, timeout: callTimeout
        ) { [weak self] result in
            op.state.withLock { $0.connectDevicePending = false }
            guard let self else { return }
            if case .failure = result { self.releaseSlot(op) }
            switch result {
            case .success(let path):
                support.record(true, owner: owner, adapter: op.adapter.rawValue)
                op.state.withLock { $0.connectDevice = true }
                self.connectDeviceAnswered(op, path: path)
            case .failure(let e) where e.kind.rawValue == DBusRemoteError.unknownMethod:
                BlueZLog.debug("\(op.adapter.rawValue): no Adapter1.ConnectDevice (bluetoothd without --experimental); discovering \(op.address)")
                support.record(false, owner: owner, adapter: op.adapter.rawValue)
                op.state.withLock { $0.connectDevice = false }
                self.search(op)
            case .failure(let e) where e.kind == .alreadyExists:
                // BlueZ up to 5.68 refuses an address it has a device for: connect that one.
                support.record(true, owner: owner, adapter: op.adapter.rawValue)
                op.state.withLock { $0.connectDevice = true; $0.knownDevice = true }
                self.tree?.synchronize { [weak self] in
                    guard let self else { return }
                    if let path = self.devicePath(op) { self.connectKnown(op, path: path) } else { self.search(op) }
                }
            case .failure(let e) where e.kind == .notReady:
                self.end(op, with: .failure(CentralManagerError.notPoweredOn(.poweredOff)))
            case .failure(let e) where e.kind == .invalidArguments:
                support.record(true, owner: owner, adapter: op.adapter.rawValue)
                self.end(op, with: .failure(CentralManagerError.addressConnectFailed(e, address: op.address)))
            case .failure(let e) where e.kind == .timeout:
                break  // our deadline reports it
            case .failure(let e):
                // The kernel gave up (`org.bluez.Failed`): try again while time is left.
                support.record(true, owner: owner, adapter: op.adapter.rawValue)
                op.state.withLock { $0.connectDevice = true }
                BlueZLog.debug("ConnectDevice \(op.address): \(e); trying again")
                self.after(.milliseconds(500)) { [weak self] in self?.askConnectDevice(op) }
            }
        }
    }

    /// `ConnectDevice` made the link to `path`: the peripheral's machinery takes over; when
    /// nobody waits any more, the link is taken down again (unless a newer call wants it).
    private func connectDeviceAnswered(_ op: AddressConnect, path: ObjectPath) {
        tree?.synchronize { [weak self] in
            guard let self else { return }
            // The link's slot passes to the peripheral's connect (it takes the link over).
            op.state.withLock { $0.slotDevice = nil }
            if !op.isFinished { return self.connectKnown(op, path: path, adopt: true) }
            if let newer = self.inner.withLock({ $0.addressConnects[op.key] }) { return self.connectKnown(newer, path: path, adopt: true) }
            self.session.connectionSlots.release(path)
            guard let connection = self.connection else { return }
            Device1(connection: connection, path: path).disconnect { _ in }
        }
    }

    /// Connects the device at `path` through ``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
    /// and completes `op` with its first `.connect` (or its failure).
    /// With `adopt`, the link `ConnectDevice` made is taken over by the peripheral's connect
    /// (its connection stream and slot); otherwise a peripheral already connected is returned as is.
    func connectKnown(_ op: AddressConnect, path: ObjectPath, adopt: Bool = false) {
        guard let peripheral = peripheral(for: path) else {
            return end(op, with: .failure(busUnavailable))
        }
        let token = CancelToken()
        let started = op.state.withLock { s -> Bool in
            guard !s.finished, s.peripheral == nil else { return false }
            s.peripheral = peripheral
            s.subscription = token
            return true
        }
        guard started else { return }
        if peripheral.isConnected && !adopt { return end(op, with: .success(peripheral)) }
        let remaining = max(op.deadline - clock.now, .milliseconds(100))
        let events = peripheral.connect(connectionTimeout: remaining)
        events.onSuccess(context: .immediate, cancelToken: token) { [weak self] update in
            switch update.connectionEvent {
            case .connect: self?.end(op, with: .success(peripheral))
            case .timeout, .giveUp:
                self?.end(op, with: .failure(CentralManagerError.addressConnectTimedOut(
                    op.address, adapter: Adapter1.name(of: op.adapter), timeout: op.timeout,
                    connectDevice: op.state.withLock { $0.connectDevice }, knownDevice: true)))
            default: break
            }
        }
        events.onFailure(context: .immediate, cancelToken: token) { [weak self] error in self?.end(op, with: .failure(error)) }
        events.onFinish(context: .immediate, cancelToken: token) { [weak self] in
            self?.end(op, with: .failure(PeripheralError(kind: .terminated, operation: "CentralManager.connect(address:)",
                                                         path: peripheral.identifier, message: "the connection stream ended")))
        }
    }

    // MARK: - The end

    /// Ends `op`: with `result` for its waiters, or (nil) because nobody waits. Its discovery is
    /// stopped; a connection attempt still pending is cancelled unless it succeeded.
    func end(_ op: AddressConnect, with result: Result<Peripheral, any Error>?) {
        inner.withLock { s in if s.addressConnects[op.key] === op { s.addressConnects[op.key] = nil } }
        releaseSlot(op)
        guard let (waiters, s) = op.finish() else { return }
        s.timer?.cancel()
        s.subscription?.cancel()
        if s.searching { endSearch(op) }
        if case .success = result {} else if let p = s.peripheral, !p.isConnected { p.disconnect() }
        guard let result else { return }
        for w in waiters { w.complete(result) }
    }

    /// Fails every connection by address in progress (the adapter went off, `reset()`).
    func endAddressConnects(error: BlueCapError) {
        let all = inner.withLock { Array($0.addressConnects.values) }
        for op in all { end(op, with: .failure(error)) }
    }
}
