// PeripheralManager+State: the adapter and state conveniences the central role has too, spelled
// the same way (adapter, whenAdapterChanges, whenPoweredOn, reset).
import BlueZ
import Futures

extension PeripheralManager: ClockDriven {}

extension PeripheralManager {
    // MARK: - Adapter

    /// The adapter in use (`hci1`), nil when there is none: the name ``CentralManager/adapter``
    /// gives (``adapterPath`` is its object path).
    public var adapter: String? { inner.withLock { $0.adapter.map(Adapter1.name(of:)) } }

    /// The adapter in use (`hci0`; nil when there is none), then each time it changes: a manager
    /// made with `adapter: nil` moves to the first powered adapter left when the one in use goes
    /// away, and registers its services and advertisement there. The latest value is replayed to
    /// a new subscriber (as ``CentralManager/whenAdapterChanges()``).
    public func whenAdapterChanges() -> FutureStream<String?> { adapterStream.stream }

    // MARK: - State

    /// Completes once the state is `.poweredOn`; fails with a ``BlueCapError`` of kind
    /// `.notPoweredOn` naming the state after `timeout` (as ``CentralManager/whenPoweredOn(timeout:)``).
    ///
    /// The state is read only after catching up with the bus (a round trip to the bus daemon):
    /// called right after bluetoothd restarted, it waits for the new bluetoothd's adapter
    /// instead of completing from the state from before the restart.
    public func whenPoweredOn(timeout: Duration = .seconds(10)) -> Future<Void> {
        poweredOn(states: stateStream.stream, tree: tracker?.tree, timeout: timeout) { [weak self] in
            let state = self?.state ?? .unknown
            return BlueCapError(kind: .notPoweredOn, operation: "PeripheralManager.whenPoweredOn", path: self?.adapterPath,
                                timeout: timeout,
                                message: "the adapter is not powered on (state \(state)): power it with `bluetoothctl power on`")
        }
    }

    // MARK: - Reset

    /// Stops advertising and removes every service at once, without waiting for bluetoothd's
    /// answers (``shutdown()`` is the same, as a future that completes once bluetoothd has
    /// answered); the state stream goes on and the manager can add services again. The
    /// counterpart of ``CentralManager/reset()``.
    public func reset() {
        shutdown()
    }
}
