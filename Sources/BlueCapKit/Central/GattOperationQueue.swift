// GattOperationQueue: a device's GATT operations in order; reads may overlap, nothing else does.

import BlueZ
import Locking
import Timing

/// Runs a device's GATT operations in the order they were queued, so two never collide in BlueZ.
///
/// What is serialized, and why:
/// - **Reads** (`ReadValue` on characteristics and descriptors) are *shared*: consecutive reads
///   run together, up to ``maxConcurrentReads`` at once. bluetoothd (src/gatt-client.c) takes
///   concurrent ReadValue calls on one device and queues the ATT requests itself; concurrent reads
///   of the same characteristic at the same offset are merged into one ATT Read and all answered.
/// - **Everything else** (writes, StartNotify/StopNotify, AcquireNotify) is *exclusive*: it starts
///   only when nothing of the device runs, and nothing starts while it runs. bluetoothd answers a
///   second StartNotify/AcquireNotify with `InProgress`, and a long or reliable write must not
///   interleave with another one; keeping writes exclusive also keeps "a read queued after a write
///   sees the written value" and "writes reach the peripheral in the order they were made".
/// - The order is strict FIFO: a read queued after a waiting exclusive operation waits for it.
///
/// Each operation finishes when its D-Bus call answers, when its deadline on the manager's
/// clock passes (it then fails with `.timeout`), or when the queue is failed (link lost,
/// terminate): then the next ones start, and a late answer is ignored. An operation ends only
/// through its ``GattOperation``, which completes the caller's promise as it ends it: no path
/// can end an operation and leave its caller waiting. The deadline runs from
/// the operation's start, not from when it was queued; the D-Bus call itself carries a longer
/// timeout (the clock's `backstop(for:)`) as a backstop. The queue holds at most ``limit`` entries.
///
/// A running operation that BlueZ answers with "Not connected" reports the link gone to the
/// handler set with ``whenLinkGone(_:)`` (the peripheral, which ends its connection): bluetoothd
/// fails every GATT call so once its ATT bearer is down, while `Device1.Connected` may read true
/// for seconds more.
final class GattOperationQueue: Sendable {
    /// Starts an entry: `id` is its operation's id; `finish` ends it in the queue.
    private typealias Start = @Sendable (_ id: Int, _ finish: @escaping @Sendable () -> Void) -> Void
    /// Fails the entry's promise without running it (or while it runs).
    private typealias Fail = @Sendable (PeripheralError) -> Void

    /// How an operation may overlap with others.
    enum Access: Sendable {
        /// A read: runs alongside other reads.
        case shared
        /// Runs alone.
        case exclusive
    }

    private struct Entry {
        let id: Int
        let operation: String
        let path: String
        let access: Access
        let timeout: Duration?
        let start: Start
        let fail: Fail
    }

    private struct State {
        var waiting: [Entry] = []
        var waitingHead = 0
        var running: [Entry] = []
        var nextID = 0
        /// The deadline timers of running operations, by entry id.
        var deadlines: [Int: ClockTask] = [:]

        var waitingCount: Int { waiting.count - waitingHead }

        /// Moves every entry that may start now from `waiting` to `running`.
        mutating func startable(maxShared: Int) -> [Entry] {
            var out: [Entry] = []
            while waitingHead < waiting.count {
                let next = waiting[waitingHead]
                switch next.access {
                case .exclusive:
                    guard running.isEmpty else { return out }
                case .shared:
                    guard running.count < maxShared, !running.contains(where: { $0.access == .exclusive }) else { return out }
                }
                waitingHead += 1
                running.append(next)
                out.append(next)
                if next.access == .exclusive { break }
            }
            if waitingHead == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                waitingHead = 0
            }
            return out
        }
    }

    /// The most operations queued (running included) before new ones fail with `.busy`.
    let limit: Int
    /// The most reads of the device in flight at once.
    let maxConcurrentReads: Int
    private let state = Locked(State())
    /// Told when a running operation's answer says the link is gone (``whenLinkGone(_:)``).
    private let linkGoneHandler = Locked<(@Sendable (PeripheralError) -> Void)?>(nil)
    /// Times the operations' deadlines (the manager's clock).
    let clock: any TimerClock

    init(limit: Int = 256, maxConcurrentReads: Int = 32, clock: any TimerClock = SystemClock.shared) {
        self.limit = limit
        self.maxConcurrentReads = maxConcurrentReads
        self.clock = clock
    }

    /// Queues an operation whose caller waits on `promise`; `promise` fails at once with `.busy`
    /// when the queue is full. When its turn comes, `start` runs with the ``GattOperation`` that
    /// is the only way to end it (``GattOperation/succeed(_:)`` or ``GattOperation/fail(_:)``,
    /// each completing `promise`). With a `timeout`, `promise` fails with `.timeout` and the
    /// queue moves on when that much time on the clock has passed since the start. When the
    /// operation is failed without an answer (deadline, ``failAll(_:)``), `onFailure` runs first
    /// with the operation's id, to undo what its start claimed.
    func enqueue<Value: Sendable>(
        _ operation: String, path: String, access: Access = .exclusive, timeout: Duration? = nil,
        promise: Promise<Value>, onFailure: (@Sendable (_ id: Int) -> Void)? = nil,
        start: @escaping @Sendable (GattOperation<Value>) -> Void
    ) {
        let maxShared = maxConcurrentReads
        let (accepted, runNow) = state.withLock { s -> (Bool, [Entry]) in
            guard s.waitingCount + s.running.count < limit else { return (false, []) }
            s.nextID += 1
            let id = s.nextID
            s.waiting.append(Entry(
                id: id, operation: operation, path: path, access: access, timeout: timeout,
                start: { [weak self] id, finish in
                    start(GattOperation(id: id, operation: operation, path: path, timeout: timeout, promise: promise, finish: finish,
                                        linkGone: { [weak self] error in self?.linkGone(id, error) }))
                },
                fail: { error in
                    onFailure?(id)
                    promise.failure(error)
                }))
            return (true, s.startable(maxShared: maxShared))
        }
        guard accepted else {
            promise.failure(PeripheralError(kind: .busy, operation: operation, path: path,
                                            message: "\(limit) GATT operations already queued for the device"))
            return
        }
        for e in runNow { run(e) }
    }

    private func run(_ entry: Entry) {
        if let timeout = entry.timeout {
            let timer = clock.schedule(after: timeout) { [weak self] in self?.timedOut(entry, after: timeout) }
            // Finished (or failed) before the timer was stored: nobody else will cancel it.
            let armed = state.withLock { s -> Bool in
                guard s.running.contains(where: { $0.id == entry.id }) else { return false }
                s.deadlines[entry.id] = timer
                return true
            }
            if !armed { timer.cancel() }
        }
        entry.start(entry.id) { [weak self] in self?.finished(entry.id) }
    }

    /// Removes a running entry and its deadline; returns whether it was running and what may start now.
    private func remove(_ id: Int) -> (found: Bool, next: [Entry], deadline: ClockTask?) {
        let maxShared = maxConcurrentReads
        return state.withLock { s in
            guard let i = s.running.firstIndex(where: { $0.id == id }) else { return (false, [], nil) }
            s.running.remove(at: i)
            return (true, s.startable(maxShared: maxShared), s.deadlines.removeValue(forKey: id))
        }
    }

    private func finished(_ id: Int) {
        let (_, next, deadline) = remove(id)
        deadline?.cancel()
        for e in next { run(e) }
    }

    private func timedOut(_ entry: Entry, after timeout: Duration) {
        let (found, next, _) = remove(entry.id)
        guard found else { return }
        // As a D-Bus call timeout reads: BlueZ's error is the timeout itself.
        let error = BlueZError(kind: .timeout, message: "no answer within \(timeout)", operation: entry.operation, path: entry.path)
        entry.fail(PeripheralError(error, operation: entry.operation, path: entry.path, timeout: timeout))
        for e in next { run(e) }
    }

    // MARK: - The link gone

    /// Sets what runs when a running operation's answer says the link is gone (BlueZ's
    /// "Not connected"): called once per such answer, outside the queue's lock, with the error
    /// the operation failed with; not for an operation already over (its deadline passed, or
    /// ``failAll(_:)`` ended it: its answer may be about a link that is gone already).
    func whenLinkGone(_ handler: @escaping @Sendable (PeripheralError) -> Void) {
        linkGoneHandler.withLock { $0 = handler }
    }

    /// The running operation `id` was answered "Not connected": it leaves the queue first (so
    /// that the link's end, which fails every other operation, leaves its caller the error it was
    /// answered), then the handler runs, then whatever may start now starts (nothing, when the
    /// handler failed the queue).
    private func linkGone(_ id: Int, _ error: PeripheralError) {
        let deadline = state.withLock { s -> ClockTask?? in
            guard let i = s.running.firstIndex(where: { $0.id == id }) else { return nil }
            s.running.remove(at: i)
            return .some(s.deadlines.removeValue(forKey: id))
        }
        guard let deadline else { return }
        deadline?.cancel()
        linkGoneHandler.withLock { $0 }?(error)
        let maxShared = maxConcurrentReads
        for e in state.withLock({ $0.startable(maxShared: maxShared) }) { run(e) }
    }

    // MARK: - Failing

    /// Fails the running and every waiting operation with `error(operation)`; the queue is empty after.
    func failAll(_ error: (String) -> PeripheralError) {
        let all = state.withLock { s -> ([Entry], Dictionary<Int, ClockTask>.Values) in
            let all = s.running + s.waiting[s.waitingHead...]
            let deadlines = s.deadlines.values
            s = State(nextID: s.nextID)
            return (all, deadlines)
        }
        for d in all.1 { d.cancel() }
        for e in all.0 { e.fail(error(e.operation)) }
    }

    /// Operations queued or running.
    var count: Int { state.withLock { $0.waitingCount + $0.running.count } }
}
