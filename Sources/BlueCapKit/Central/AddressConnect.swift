// AddressConnect: one connection by address in progress, shared by every caller asking for it.
import BlueZ
import DBus
import Futures
import Locking

/// One ``CentralManager/connect(address:addressType:timeout:)`` in progress for an address on an
/// adapter. Every concurrent call for the same address joins it as a waiter; when every waiter's
/// future is abandoned the operation is cancelled (its discovery stopped, a pending connection
/// cancelled).
final class AddressConnect: Sendable {
    /// The manager's key: adapter path and address.
    let key: String
    /// The address, upper case.
    let address: String
    let addressType: PeripheralAddressType
    let adapter: ObjectPath
    let timeout: Duration
    /// The clock reading when the operation gives up.
    let deadline: Duration

    struct State {
        var waiters: [Int: Promise<Peripheral>] = [:]
        var nextWaiter = 0
        var finished = false
        /// A discovery of ours runs for the address (see CentralManager+AddressDiscovery).
        var searching = false
        /// What `ConnectDevice` answered: true when it exists, false for `UnknownMethod`.
        var connectDevice: Bool?
        /// A `ConnectDevice` call is on its way (a bluetoothd without the method answers
        /// `UnknownMethod` at once, so a pending call means it has it).
        var connectDevicePending = false
        /// The device object existed when the operation started (or `AlreadyExists`).
        var knownDevice = false
        /// The peripheral being connected through its `connect` machinery.
        var peripheral: Peripheral?
        /// Our subscription to that peripheral's connection stream.
        var subscription: CancelToken?
        var timer: ScheduledTask?
        /// The device path whose connection slot this connect asked for `ConnectDevice`, until
        /// the answer (a link passes it to the peripheral).
        var slotDevice: ObjectPath?
    }

    /// Sendable through this lock; waiters are completed outside it.
    let state = Locked(State())

    init(address: String, addressType: PeripheralAddressType, adapter: ObjectPath, timeout: Duration, now: Duration) {
        self.key = Self.key(adapter: adapter, address: address)
        self.address = address
        self.addressType = addressType
        self.adapter = adapter
        self.timeout = timeout
        self.deadline = now + timeout
    }

    static func key(adapter: ObjectPath, address: String) -> String { adapter.rawValue + " " + address }

    // MARK: - Waiters

    /// Adds a caller's promise; returns its id.
    func add(_ promise: Promise<Peripheral>) -> Int {
        state.withLock { s in
            s.nextWaiter += 1
            s.waiters[s.nextWaiter] = promise
            return s.nextWaiter
        }
    }

    /// Removes waiter `id` (its future was abandoned); true when no waiter is left and the
    /// operation is still running.
    func remove(_ id: Int) -> Bool {
        state.withLock { s in
            s.waiters[id] = nil
            return s.waiters.isEmpty && !s.finished
        }
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// Marks the operation finished and hands back what must be completed and undone; nil when
    /// it had finished already.
    func finish() -> (waiters: [Promise<Peripheral>], State)? {
        state.withLock { s -> ([Promise<Peripheral>], State)? in
            guard !s.finished else { return nil }
            s.finished = true
            let taken = s
            let waiters = s.waiters.sorted { $0.key < $1.key }.map(\.value)
            s.waiters = [:]
            s.peripheral = nil
            s.subscription = nil
            s.timer = nil
            return (waiters, taken)
        }
    }
}
