// CentralManager: the central role over BlueZ.
import BlueZ
import DBus
import Foundation
import Futures
import Locking

/// The entry point of the central role: adapter state, scanning, the peripherals found, and
/// connections by address (``connect(address:addressType:timeout:)``).
///
/// ```swift
/// let manager = CentralManager()          // on BluetoothSession.default, the system bus
/// for try await state in manager.whenStateChanges().values where state == .poweredOn { break }
/// for try await peripheral in manager.startScanning(forServiceUUIDs: [TISensorTag.AccelerometerService.uuid]).values { … }
/// ```
///
/// Futures and streams complete on `context` (the library's serial queue by default); no user
/// callback is called under a lock of ours.
public final class CentralManager: Sendable {
    /// The session the manager runs on: its bus connection, object cache and clock.
    public let session: BluetoothSession
    /// Where callbacks run.
    public let context: any ExecutionContext
    /// What times every deadline of the manager and its peripherals (the session's clock):
    /// power-on, scan, connection, discovery, read/write and notification timeouts, retry
    /// backoff and reconnection delays.
    public var clock: any TimerClock { session.clock }
    /// The adapter asked for (`hci1`), nil for automatic choice.
    public let adapterName: String?
    var connection: Connection? { session.connection }
    let tree: ObjectTree?
    let tracker: AdapterStateTracker?
    let stateStream = StreamPromise<ManagerState>(capacity: 1)
    /// The adapter in use after each change (see CentralManager+Adapters).
    let adapterStream = StreamPromise<String?>(capacity: 1)

    struct State {
        var peripherals: [ObjectPath: Peripheral] = [:]
        var scan: ScanSession?
        var nextScan = 0
        var observations: [ObjectTreeObservation] = []
        var lastState: ManagerState = .unknown
        var lastAdapter: ObjectPath?
        /// The passive monitoring session (see CentralManager+Monitoring).
        var monitor: MonitorSession?
        /// Connections by address in progress, by adapter path and address (CentralManager+ConnectByAddress).
        var addressConnects: [String: AddressConnect] = [:]
        /// The addresses a discovery of ours looks for, per adapter (CentralManager+AddressDiscovery).
        var addressSearches: [ObjectPath: Set<String>] = [:]
        /// The addresses of peripherals whose connection attempt waits for their device object,
        /// per adapter, with how many wait (CentralManager+AddressDiscovery).
        var deviceSearches: [ObjectPath: [String: Int]] = [:]

        /// Every address a discovery of ours looks for on `adapter`.
        func searchedAddresses(on adapter: ObjectPath) -> Set<String> {
            (addressSearches[adapter] ?? []).union(deviceSearches[adapter].map { Set($0.keys) } ?? [])
        }
    }
    let inner = Locked(State())

    /// A manager on `adapter` (`"hci0"`; nil: the first powered adapter, else the first) in
    /// `session` (the process-wide ``BluetoothSession/default`` when not given). Callbacks run on
    /// `context` (the session's context when nil). When the bus cannot be reached, or the
    /// session is closed, the state is `.unsupported`.
    public init(adapter: String? = nil, session: BluetoothSession = .default, context: (any ExecutionContext)? = nil) {
        self.session = session
        self.context = context ?? session.context
        self.adapterName = adapter
        if let tree = session.tree, session.isOpen {
            self.tree = tree
            self.tracker = AdapterStateTracker(tree: tree, adapterName: adapter)
        } else {
            self.tree = nil
            self.tracker = nil
        }
        start()
        session.join(self)
    }

    private func start() {
        guard let tree, let tracker else {
            inner.withLock { $0.lastState = .unsupported }
            stateStream.success(.unsupported)
            return
        }
        let o1 = tracker.observe { [weak self] snapshot in self?.adapterStateChanged(snapshot) }
        let o2 = tree.observe { [weak self] event in self?.treeEvent(event) }
        // Every RSSI-only change comes here instead of `treeEvent` and the device's observer.
        let o3 = tree.observeProperty("RSSI", of: Device1.interface) { [weak self] path, value in self?.rssiChanged(path, value) }
        inner.withLock { $0.observations = [o1, o2, o3] }
        tracker.start()
    }

    deinit {
        tracker?.stop()
        for o in inner.withLock({ $0.observations }) { o.cancel() }
    }

    // MARK: - State

    /// The adapter state (`org.bluez` owner, adapter presence, `Adapter1.Powered`).
    public var state: ManagerState { inner.withLock { $0.lastState } }

    /// The adapter in use (`hci0`), nil when none.
    public var adapter: String? { tracker?.snapshot.adapter.map(Adapter1.name(of:)) }

    /// The state, then each change (`.resetting` while bluetoothd is away, `.poweredOn` once back).
    /// The stream keeps the latest state: a new subscriber gets it first.
    public func whenStateChanges() -> FutureStream<ManagerState> { stateStream.stream }

    /// Completes once the state is `.poweredOn`; fails with ``BlueCapError/notPoweredOn(_:)``
    /// after `timeout`.
    ///
    /// The state is read only after catching up with the bus (a round trip to the bus daemon,
    /// see `ObjectTree.synchronize`): called right after bluetoothd restarted, it waits for the
    /// new bluetoothd's adapter instead of completing from the state from before the restart.
    public func whenPoweredOn(timeout: Duration = .seconds(10)) -> Future<Void> {
        poweredOn(states: stateStream.stream, tree: tree, timeout: timeout) { [weak self] in
            CentralManagerError.notPoweredOn(self?.state ?? .unknown)
        }
    }

    private func adapterStateChanged(_ snapshot: AdapterStateTracker.Snapshot) {
        let moved = inner.withLock { s -> Bool in
            defer { s.lastAdapter = snapshot.adapter }
            return s.lastAdapter != snapshot.adapter
        }
        if moved { adapterMoved(to: snapshot.adapter) }
        endMonitoringIfAdapterGone(snapshot)
        let (changed, endedScan) = inner.withLock { s -> (Bool, ScanSession?) in
            let changed = s.lastState != snapshot.state
            s.lastState = snapshot.state
            var ended: ScanSession?
            if let scan = s.scan, snapshot.state != .poweredOn || snapshot.adapter != scan.adapter {
                ended = scan
                s.scan = nil
            }
            return (changed, ended)
        }
        if changed { stateStream.success(snapshot.state) }
        if snapshot.state != .poweredOn { endAddressConnects(error: .notPoweredOn(snapshot.state)) }
        endedScan?.timer?.cancel()
        endedScan?.promise.finish(throwing: CentralManagerError.adapterUnavailable(snapshot.state))
    }

    // MARK: - Peripherals

    /// The peripherals discovered so far (and not terminated).
    public var peripherals: [Peripheral] {
        inner.withLock { Array($0.peripherals.values) }.sorted { $0.identifier < $1.identifier }
    }

    /// The peripherals with these addresses (`C0:FF:EE:00:00:01`, any case) on the manager's
    /// adapter that BlueZ knows (a `Device1` object: seen in a scan, paired, or connected) or
    /// that the manager found, in the order asked; unknown addresses are left out. An address
    /// matches `Device1.Address` (``Peripheral/address``): a bonded peer that uses privacy is
    /// found by its identity address.
    public func retrievePeripherals(withAddresses addresses: [String]) -> [Peripheral] {
        guard let tree, let adapter = tracker?.snapshot.adapter else { return [] }
        return addresses.compactMap { address in
            guard let path = tree.devicePaths(withAddress: address, under: adapter).first else { return nil }
            return inner.withLock({ $0.peripherals[path] }) ?? peripheral(for: path)
        }
    }

    /// The peripheral for a device path, created on first sight.
    func peripheral(for path: ObjectPath) -> Peripheral? {
        guard let connection, let tree else { return nil }
        let (p, created) = inner.withLock { s -> (Peripheral, Bool) in
            if let p = s.peripherals[path] { return (p, false) }
            let p = Peripheral(path: path, session: session, connection: connection, tree: tree, context: context,
                               deviceSearch: { [weak self] p, on in self?.setDeviceSearch(for: p, on) }) { [weak self] p in
                self?.inner.withLock { s in if s.peripherals[p.path] === p { s.peripherals.removeValue(forKey: p.path) } }
            }
            s.peripherals[path] = p
            return (p, true)
        }
        if created { p.startObserving() }
        return p
    }

    /// Stops scanning and terminates every peripheral (disconnecting them); the state stream goes on.
    public func reset() {
        stopScanning()
        endAddressConnects(error: BlueCapError(kind: .terminated, operation: "CentralManager.connect(address:)",
                                               message: "the manager was reset"))
        let all = inner.withLock { s -> [Peripheral] in
            defer { s.peripherals = [:] }
            return Array(s.peripherals.values)
        }
        for p in all { p.terminate() }
    }

    var busUnavailable: CentralManagerError { .busUnavailable(session.unavailableReason ?? "no D-Bus connection") }
}
