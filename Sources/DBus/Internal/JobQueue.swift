// The lock-protected queue through which other threads hand work to a connection's owner thread.
import Glibc
import Locking

/// A bounded FIFO of closures plus the eventfd that wakes the owner thread.
///
/// `@unchecked Sendable`: `items`, `wakePending` and `closed` live in `state` (a `Locked`);
/// `eventFD` and `notFull` are immutable after init.
final class JobQueue: @unchecked Sendable {
    typealias Job = @Sendable () -> Void
    static let capacity = 65_536

    private struct State {
        var items: [Job] = []
        var wakePending = false
        var closed = false
    }

    let eventFD: Int32
    private let state = Locked(State())
    /// Broadcast whenever the queue is emptied or closed: submitters waiting for room recheck.
    private let notFull = LockCondition()

    init() {
        eventFD = LibDBus.makeEventFD()
    }

    deinit {
        Glibc.close(eventFD)
    }

    /// Appends `job`; waits while the queue is full. Returns false once the queue is closed.
    func submit(_ job: @escaping Job) -> Bool {
        let (accepted, mustWake) = state.withLock(waitingOn: notFull,
                                                   until: { $0.items.count < JobQueue.capacity || $0.closed }) { s in
            if s.closed { return (false, false) }
            s.items.append(job)
            defer { s.wakePending = true }
            return (true, !s.wakePending)
        }
        if mustWake { wake() }
        return accepted
    }

    /// Appends `job` from the owner thread itself, for the owner's task executor: no wait for
    /// room (only the owner thread empties the queue, so waiting there would never end) and no
    /// eventfd write (the owner's loop runs queued jobs before it polls, and polls without
    /// sleeping while any are queued). Bounded all the same: a task has at most one job queued
    /// at a time. Returns false once the queue is closed.
    func submitFromOwner(_ job: @escaping Job) -> Bool {
        state.withLock { s in
            if s.closed { return false }
            s.items.append(job)
            return true
        }
    }

    /// Writes the eventfd so the owner's poll returns.
    func wake() {
        var one: UInt64 = 1
        _ = write(eventFD, &one, 8)
    }

    /// Drains the eventfd counter (owner thread, after poll reported it readable).
    func drainWakeups() {
        var value: UInt64 = 0
        _ = read(eventFD, &value, 8)
    }

    /// Takes every queued job (owner thread).
    func takeAll() -> [Job] {
        let out = state.withLock { s -> [Job] in
            defer { s.items = []; s.wakePending = false }
            return s.items
        }
        notFull.broadcast()
        return out
    }

    var isEmpty: Bool {
        state.withLock { $0.items.isEmpty }
    }

    /// Refuses further jobs and returns those still queued (owner thread, at shutdown).
    func close() -> [Job] {
        let out = state.withLock { s -> [Job] in
            defer { s.closed = true; s.items = [] }
            return s.items
        }
        notFull.broadcast()
        return out
    }
}
