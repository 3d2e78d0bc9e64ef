// ClockedContext: a context whose timers run on a given clock.
import Timing

// MARK: - ClockedContext

/// Runs callbacks on `base` and times its delayed work (``ExecutionContext/schedule(after:_:)``:
/// `timeout(after:)`, `retry(times:delay:)`, `debounce`, `throttle`) on `clock`, so that every
/// deadline of a program can come from one clock — a `ManualClock` in tests.
///
/// A `BluetoothSession` gives its managers such a context: futures completed there time out on
/// the session's clock.
public struct ClockedContext: ExecutionContext {
    /// Where callbacks run.
    public let base: any ExecutionContext
    /// What times delayed work.
    public let clock: any TimerClock

    /// `base` with its timers on `clock`. Wrapping a `ClockedContext` replaces its clock.
    public init(_ base: any ExecutionContext, clock: any TimerClock) {
        self.base = (base as? ClockedContext)?.base ?? base
        self.clock = clock
    }

    /// Runs `task` on the base context.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        base.execute(task)
    }

    /// Runs `task` on the base context once `clock` has moved `delay` on, unless the handle is
    /// cancelled first (which releases `task` at once).
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        let base = self.base
        return clock.schedule(after: delay) { base.execute(task) }
    }
}
