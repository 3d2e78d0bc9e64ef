import Locking

// MARK: - ManualContext

/// A context for deterministic tests: tasks run only when the test calls ``run()`` or
/// ``advance(by:)``, and delayed tasks wait for a virtual clock.
///
/// Like an embedded event loop: `timeout(after:context:)` and `retry(times:delay:context:…)` given a
/// `ManualContext` fire exactly when the test advances the clock past their deadline, so tests
/// need no real sleeps. Tasks run on the thread that calls `run()` / `advance(by:)`.
public final class ManualContext: ExecutionContext {
    private struct Timer {
        let deadline: Duration
        let sequence: Int
        let task: @Sendable () -> Void
    }

    private struct State {
        var now: Duration = .zero
        var ready = RingBuffer<@Sendable () -> Void>()
        var timers: [Timer] = []
        var sequence = 0
    }

    // Sendable through this lock: every field of the context lives inside it.
    private let state = Locked(State())

    /// Creates a context whose virtual clock reads zero.
    public init() {}

    /// The virtual time elapsed since creation.
    public var now: Duration { state.withLock { $0.now } }

    /// The number of tasks ready to run plus timers not yet due.
    public var pendingCount: Int { state.withLock { $0.ready.count + $0.timers.count } }

    /// Queues `task`; it runs at the next ``run()`` or ``advance(by:)``.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        state.withLock { $0.ready.append(task) }
    }

    /// Schedules `task` for virtual time `now + delay`.
    public func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.sequence += 1
            state.timers.append(Timer(deadline: state.now + delay, sequence: state.sequence, task: task))
        }
    }

    /// Schedules `task` for virtual time `now + delay`; cancelling the handle removes the timer
    /// (and ``pendingCount`` drops by one) if it has not run yet.
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        let sequence = state.withLock { state -> Int in
            state.sequence += 1
            state.timers.append(Timer(deadline: state.now + delay, sequence: state.sequence, task: task))
            return state.sequence
        }
        return ScheduledTask { [weak self] in
            // Removed under the lock and released after it (the task may own anything).
            let removed = self?.state.withLock { state -> Timer? in
                guard let index = state.timers.firstIndex(where: { $0.sequence == sequence }) else { return nil }
                return state.timers.remove(at: index)
            }
            _ = removed
        }
    }

    /// Runs ready tasks (including tasks they queue) until none is left, without moving the
    /// clock. Returns how many ran.
    @discardableResult
    public func run() -> Int {
        var count = 0
        while let task = state.withLock({ $0.ready.popFirst() }) {
            task()
            count += 1
        }
        return count
    }

    /// Moves the virtual clock forward by `duration`, running every timer that falls due in
    /// deadline order (with ready tasks drained in between). Returns how many tasks ran.
    @discardableResult
    public func advance(by duration: Duration) -> Int {
        let target = state.withLock { $0.now + duration }
        var count = run()
        while let timer = nextTimer(dueBy: target) {
            timer.task()
            count += 1 + run()
        }
        state.withLock { $0.now = target }
        return count
    }

    private func nextTimer(dueBy target: Duration) -> Timer? {
        state.withLock { state in
            guard let index = state.timers.indices.min(by: { lhs, rhs in
                let (l, r) = (state.timers[lhs], state.timers[rhs])
                return (l.deadline, l.sequence) < (r.deadline, r.sequence)
            }), state.timers[index].deadline <= target else { return nil }
            let timer = state.timers.remove(at: index)
            state.now = max(state.now, timer.deadline)
            return timer
        }
    }
}
