import Dispatch

// MARK: - ExecutionContext

/// Where a future's callbacks run.
///
/// The library provides ``ImmediateContext`` (the completing thread), ``QueueContext``
/// (a `DispatchQueue`) and ``ManualContext`` (a test double with a virtual clock). The default
/// context of every API is ``QueueContext/futuresDefault``, a serial queue owned by the library:
/// never the main queue, which nothing drains in a Linux command-line program.
public protocol ExecutionContext: Sendable {
    /// Runs `task` on this context, now or later but exactly once.
    func execute(_ task: @escaping @Sendable () -> Void)

    /// Runs `task` on this context once `delay` has elapsed. Used by `timeout(after:)` and
    /// `retry(times:delay:)`; ``ManualContext`` runs it when its virtual clock reaches the deadline.
    func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void)

    /// Like ``execute(after:_:)``, but returns a handle that unschedules `task` (releasing it)
    /// if cancelled before the deadline. Used by `timeout(after:)` to drop its timer as soon as
    /// the future completes.
    func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask
}

extension ExecutionContext {
    /// Default delayed execution: a timer on a global queue that then hops onto this context.
    public func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.dispatchInterval) {
            self.execute(task)
        }
    }
}

extension ExecutionContext {
    /// Default cancellable delayed execution: a Dispatch timer on a global queue that then hops
    /// onto this context; cancelling the handle cancels the timer, which releases `task`.
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        DispatchTimer.start(on: DispatchQueue.global(), after: delay) { self.execute(task) }
    }
}

extension ExecutionContext where Self == ImmediateContext {
    /// The context that runs callbacks on the completing (or registering) thread.
    @inlinable
    public static var immediate: ImmediateContext { ImmediateContext() }
}

extension ExecutionContext where Self == QueueContext {
    /// The library's default context: a serial queue owned by the library (not the main queue).
    public static var futuresDefault: QueueContext { QueueContext.futuresDefault }
}

// MARK: - ImmediateContext

/// Runs callbacks on the thread that completes the future (or that registers the callback on an
/// already completed future).
///
/// Nested executions are trampolined: if a callback running here completes another promise
/// whose callbacks also run here, those callbacks run after the current one returns, in a loop
/// on the same thread rather than recursively. Chains of any length use constant stack.
public struct ImmediateContext: ExecutionContext {
    /// Creates the immediate context.
    @inlinable
    public init() {}

    /// Runs `task` on the calling thread (after the callback that is currently running on this
    /// thread, if any, returns).
    @inlinable
    public func execute(_ task: @escaping @Sendable () -> Void) {
        Trampoline.current.run(task)
    }
}

// MARK: - QueueContext

/// Runs callbacks asynchronously on a `DispatchQueue`.
public struct QueueContext: ExecutionContext {
    /// The queue callbacks are submitted to.
    public let queue: DispatchQueue

    /// Creates a context that submits callbacks to `queue` with `async`.
    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// The library's default context: the serial queue `bluecap.futures.default`.
    public static let futuresDefault = QueueContext(queue: DispatchQueue(label: "bluecap.futures.default"))

    /// A context on the global concurrent queue; callbacks may run in parallel.
    public static let global = QueueContext(queue: DispatchQueue.global())

    /// Submits `task` to the queue.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        queue.async(execute: task)
    }

    /// Runs `task` on the queue after `delay` (a Dispatch timer source) unless the returned handle
    /// is cancelled first; cancelling releases `task` at once.
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        DispatchTimer.start(on: queue, after: delay, task)
    }

    /// Submits `task` to the queue after `delay`.
    public func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + delay.dispatchInterval, execute: task)
    }
}

// MARK: - DispatchTimer

/// One-shot cancellable timers on Dispatch timer sources.
enum DispatchTimer {
    /// Runs `task` on `queue` once `delay` has elapsed, unless the returned handle is cancelled.
    /// Cancelling the source makes Dispatch release its handler, and with it `task`.
    static func start(
        on queue: DispatchQueue, after delay: Duration, _ task: @escaping @Sendable () -> Void
    ) -> ScheduledTask {
        let timer = TimerSource(DispatchSource.makeTimerSource(queue: queue))
        // The handler references the source until it fires or is cancelled; cancelling either
        // way releases the handler, breaking that cycle.
        timer.source.setEventHandler {
            timer.source.cancel()
            task()
        }
        timer.source.schedule(deadline: .now() + delay.dispatchInterval)
        timer.source.resume()
        return ScheduledTask { timer.source.cancel() }
    }
}

/// A Dispatch timer source shared between its handler and the handle that cancels it.
private final class TimerSource: @unchecked Sendable {
    // @unchecked Sendable: after set-up only `cancel()` is called from other threads, and
    // libdispatch serialises dispatch_source_cancel internally (it is documented thread-safe).
    let source: any DispatchSourceTimer

    init(_ source: any DispatchSourceTimer) {
        self.source = source
    }
}

// MARK: - Duration conversion

extension Duration {
    /// This duration as a Dispatch interval (nanosecond precision, negative values clamp to 0).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanos = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanos.overflow else { return .never }
        return .nanoseconds(Int(max(0, nanos.partialValue + attoseconds / 1_000_000_000)))
    }
}
