// ManualContext: a test context whose tasks run when asked and whose timers run on a ManualClock.
import Locking
import Timing

// MARK: - ManualContext

/// A context for deterministic tests: tasks run only when the test calls ``run()`` or
/// ``advance(by:)``, and delayed tasks wait for a virtual clock, a `Timing.ManualClock`.
///
/// Like an embedded event loop: `timeout(after:context:)` and `retry(times:delay:context:…)` given a
/// `ManualContext` fire exactly when the test advances the clock past their deadline, so tests
/// need no real sleeps. Tasks run on the thread that calls `run()` / `advance(by:)`.
///
/// Give it the `ManualClock` of the `BluetoothSession` a manager runs on (`ManualContext(clock:)`)
/// and one ``advance(by:)`` (or the clock's own `advance(by:)`) moves the manager's deadlines and
/// the futures chain's timers together, in deadline order.
public final class ManualContext: ExecutionContext {
    /// The clock the delayed tasks wait for.
    public let clock: ManualClock

    // Sendable through this lock: the queue of ready tasks lives inside it.
    private let ready = Locked(RingBuffer<@Sendable () -> Void>())
    /// Ready tasks run by timers as they fired, not yet counted by ``advance(by:)``.
    private let drained = Locked(0)

    /// Creates a context on `clock` (a new clock reading zero by default).
    public init(clock: ManualClock = ManualClock()) {
        self.clock = clock
    }

    /// The virtual time elapsed: the clock's reading.
    public var now: Duration { clock.now }

    /// The number of tasks ready to run plus timers not yet due (every timer of ``clock``,
    /// including those another user of the clock armed).
    public var pendingCount: Int { ready.withLock { $0.count } + clock.pendingCount }

    /// Queues `task`; it runs at the next ``run()`` or ``advance(by:)``.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        ready.withLock { $0.append(task) }
    }

    /// Schedules `task` for virtual time `now + delay`.
    public func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void) {
        schedule(after: delay, task)
    }

    /// Schedules `task` for virtual time `now + delay`; cancelling the handle removes the timer
    /// (and ``pendingCount`` drops by one) if it has not run yet. When the timer fires, the
    /// ready tasks it queued run right after it, before any later timer.
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        clock.schedule(after: delay) { [weak self] in
            task()
            guard let self else { return }
            let ran = self.run()
            self.drained.withLock { $0 += ran }
        }
    }

    /// Runs ready tasks (including tasks they queue) until none is left, without moving the
    /// clock. Returns how many ran.
    @discardableResult
    public func run() -> Int {
        var count = 0
        while let task = ready.withLock({ $0.popFirst() }) {
            task()
            count += 1
        }
        return count
    }

    /// Moves the virtual clock forward by `duration`, running every timer that falls due in
    /// deadline order (with ready tasks drained in between). Returns how many tasks ran.
    @discardableResult
    public func advance(by duration: Duration) -> Int {
        var count = run()
        count += clock.advance(by: duration)
        count += drained.withLock { n -> Int in
            defer { n = 0 }
            return n
        }
        return count
    }
}
