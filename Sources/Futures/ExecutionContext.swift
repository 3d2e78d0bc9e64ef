import Dispatch
import Timing

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
    /// Default delayed execution: ``schedule(after:_:)``, the handle dropped.
    public func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void) {
        _ = schedule(after: delay, task)
    }

    /// Default cancellable delayed execution: a timer of `Timing.SystemClock.shared` (the
    /// global queue) that then hops onto this context; cancelling the handle cancels the
    /// timer, which releases `task`.
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        SystemClock.shared.schedule(after: delay) { self.execute(task) }
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

    /// Runs `task` on the queue after `delay` (a `Timing.SystemClock` timer on the queue)
    /// unless the returned handle is cancelled first; cancelling releases `task` at once.
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        SystemClock(queue: queue).schedule(after: delay, task)
    }

    /// Submits `task` to the queue after `delay`.
    public func execute(after delay: Duration, _ task: @escaping @Sendable () -> Void) {
        schedule(after: delay, task)
    }
}
