// Scheduler: when the simulator's timed work runs (connection delays, RSSI updates, storms).

import Dispatch

// MARK: - Scheduler

/// A cancellable piece of scheduled work.
public protocol ScheduledWork: AnyObject, Sendable {
    /// Cancels the work if it has not run yet.
    func cancel()
}

/// Runs work later on the simulator's executor. `DispatchScheduler` uses real time on the
/// simulator's queue; `ManualScheduler` runs work only when a test advances its clock.
public protocol SimulatorScheduler: AnyObject, Sendable {
    /// Runs `work` once after `delay`.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
    /// Runs `work` every `interval` until cancelled.
    @discardableResult
    func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
}

extension Duration {
    /// Nanoseconds, saturating at zero.
    var nanoseconds: Int {
        let (s, a) = components
        return max(0, Int(s) * 1_000_000_000 + Int(a / 1_000_000_000))
    }
}

// MARK: - DispatchScheduler

/// Real-time scheduling on one serial dispatch queue (the simulator's queue).
public final class DispatchScheduler: SimulatorScheduler {
    private let queue: DispatchQueue

    /// Schedules on `queue`.
    public init(queue: DispatchQueue) { self.queue = queue }

    /// `@unchecked Sendable`: DispatchSource cancellation is thread-safe; `timer` is never reassigned.
    private final class TimerWork: ScheduledWork, @unchecked Sendable {
        let timer: DispatchSourceTimer
        init(_ timer: DispatchSourceTimer) { self.timer = timer }
        func cancel() { timer.cancel() }
    }

    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(delay.nanoseconds))
        timer.setEventHandler {
            work()
            timer.cancel()  // releases this handler, breaking the timer↔handler cycle
        }
        timer.resume()
        return TimerWork(timer)
    }

    public func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let ns = max(1, interval.nanoseconds)
        timer.schedule(deadline: .now() + .nanoseconds(ns), repeating: .nanoseconds(ns), leeway: .nanoseconds(ns / 10))
        timer.setEventHandler(handler: work)
        timer.resume()
        return TimerWork(timer)
    }
}
