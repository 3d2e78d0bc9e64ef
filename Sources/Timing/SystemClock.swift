// SystemClock: real time, on dispatch timer sources.
import Dispatch

// MARK: - SystemClock

/// Real time: work runs on `queue` when a dispatch timer source fires.
public final class SystemClock: TimerClock {
    /// The clock on the global concurrent queue, the default of every manager.
    public static let shared = SystemClock()

    private let queue: DispatchQueue
    private let origin = ContinuousClock.now
    /// Every one-shot deadline, on one timer source (see ``DeadlineTimer``).
    private let deadlines: DeadlineTimer

    /// A clock whose work runs on `queue` (the global concurrent queue by default).
    public init(queue: DispatchQueue = .global()) {
        self.queue = queue
        deadlines = DeadlineTimer(queue: queue)
    }

    public var now: Duration { ContinuousClock.now - origin }

    /// Runs `work` on the clock's queue after `delay`. Scheduling and cancelling cost a heap
    /// update under a lock: every deadline shares one dispatch timer source, armed for the
    /// earliest (an operation's timeout does not create, arm and cancel a timer source of its own).
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        deadlines.schedule(after: delay, work)
    }

    @discardableResult
    public func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        let timer = TimerSource(DispatchSource.makeTimerSource(queue: queue))
        let step = max(interval, .nanoseconds(1)).dispatchInterval
        timer.source.setEventHandler(handler: work)
        timer.source.schedule(deadline: .now() + step, repeating: step, leeway: step.tenth)
        timer.source.resume()
        return ClockTask { timer.source.cancel() }
    }
}

// MARK: - TimerSource

/// A Dispatch timer source shared between its handler and the task that cancels it.
private final class TimerSource: @unchecked Sendable {
    // @unchecked Sendable: after set-up only `cancel()` is called from other threads, and
    // libdispatch serialises dispatch_source_cancel internally (it is documented thread-safe).
    let source: any DispatchSourceTimer

    init(_ source: any DispatchSourceTimer) {
        self.source = source
    }
}

// MARK: - Duration to Dispatch

extension Duration {
    /// Whole nanoseconds, saturating at zero and at `Int.max`.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return .nanoseconds(0) }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .nanoseconds(.max) }
        let (total, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return .nanoseconds(overflow2 ? .max : Int(max(0, total)))
    }
}

extension DispatchTimeInterval {
    /// A tenth of the interval (the leeway of repeating timers).
    var tenth: DispatchTimeInterval {
        if case .nanoseconds(let n) = self { return .nanoseconds(n / 10) }
        return .nanoseconds(0)
    }
}
