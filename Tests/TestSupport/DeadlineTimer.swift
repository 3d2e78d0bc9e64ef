// DeadlineTimer: one-shot timers for test deadlines that leave nothing behind once cancelled.
import Dispatch
import Locking

/// A one-shot timer on a Dispatch timer source. Cancelling it releases its handler at once.
///
/// `Task.sleep` cannot do that: a cancelled sleep returns early, but its wake-up job stays queued
/// in the global executor until the deadline. A test waits for something with a deadline
/// thousands of times in a soak run; with `Task.sleep` every satisfied wait would stay in memory
/// for its full timeout and the soak would measure its own harness.
public final class DeadlineTimer: @unchecked Sendable {
    // @unchecked Sendable: `source` is set once in init; DispatchSource cancel is thread-safe.
    private let source: any DispatchSourceTimer

    /// Runs `handler` on a global queue after `delay`, unless cancelled first.
    public init(after delay: Duration, _ handler: @escaping @Sendable () -> Void) {
        let source = DispatchSource.makeTimerSource(queue: .global())
        let (seconds, attoseconds) = delay.components
        source.schedule(deadline: .now() + .nanoseconds(Int(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))))
        // The handler holds the source until it fires or is cancelled; either way cancel()
        // releases the handler, breaking that cycle.
        source.setEventHandler {
            source.cancel()
            handler()
        }
        source.activate()
        self.source = source
    }

    /// Stops the timer if it has not fired; its handler is released.
    public func cancel() { source.cancel() }
}

/// Sleeps for `duration`; cancelling the task ends the sleep and its timer at once (see
/// ``DeadlineTimer`` for why not `Task.sleep`). Throws `CancellationError` when cancelled.
public func cancellableSleep(for duration: Duration) async throws {
    let sleeper = Sleeper()
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            if !sleeper.start(c, after: duration) { c.resume(throwing: CancellationError()) }
        }
    } onCancel: {
        sleeper.finish(CancellationError())
    }
}

/// One sleep: its continuation and timer, finished exactly once (timer or cancellation).
private final class Sleeper: Sendable {
    private struct Inner {
        var continuation: CheckedContinuation<Void, any Error>?
        var timer: DeadlineTimer?
        var finished = false
    }
    private let inner = Locked(Inner())

    /// Arms the timer; false when the sleep was cancelled before it started.
    func start(_ continuation: CheckedContinuation<Void, any Error>, after duration: Duration) -> Bool {
        inner.withLock { i in
            guard !i.finished else { return false }
            i.continuation = continuation
            i.timer = DeadlineTimer(after: duration) { [self] in finish(nil) }
            return true
        }
    }

    /// Resumes the sleeper (with `error`, or normally) and drops the timer; later calls do nothing.
    func finish(_ error: (any Error)?) {
        let (continuation, timer) = inner.withLock { i -> (CheckedContinuation<Void, any Error>?, DeadlineTimer?) in
            defer { i = Inner(finished: true) }
            return (i.continuation, i.timer)
        }
        timer?.cancel()
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
    }
}
