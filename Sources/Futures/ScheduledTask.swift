import Locking

// MARK: - ScheduledTask

/// A handle on a task scheduled with ``ExecutionContext/schedule(after:_:)``: cancelling it
/// before the deadline stops the task from running and releases it (and what it captured)
/// right away instead of at the deadline.
public final class ScheduledTask: Sendable {
    // Sendable through this lock: the cancel action is taken out of it exactly once.
    private let action: Locked<(@Sendable () -> Void)?>

    /// Creates a handle whose ``cancel()`` calls `onCancel` once. Contexts implementing
    /// ``ExecutionContext/schedule(after:_:)`` pass an action that unschedules and releases
    /// the task; it must be harmless once the task has run.
    public init(onCancel: @escaping @Sendable () -> Void) {
        action = Locked(onCancel)
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { action.withLock { $0 == nil } }

    /// Unschedules the task if it has not started yet. Returns `true` on the first call.
    @discardableResult
    public func cancel() -> Bool {
        let onCancel = action.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        onCancel?()
        return onCancel != nil
    }
}
