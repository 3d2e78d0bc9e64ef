// ClockTask: the handle on work scheduled with a TimerClock.
import Locking

// MARK: - ClockTask

/// A handle on work scheduled with a ``TimerClock``: cancelling it before the work runs
/// unschedules the work and releases it (and what it captured) at once.
public final class ClockTask: Sendable {
    // Sendable through this lock: the cancel action is taken out of it exactly once.
    private let action: Locked<(@Sendable () -> Void)?>

    /// A handle whose ``cancel()`` calls `onCancel` once; clocks pass an action that unschedules
    /// the work, harmless once the work has run.
    public init(onCancel: @escaping @Sendable () -> Void) {
        action = Locked(onCancel)
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { action.withLock { $0 == nil } }

    /// Unschedules the work if it has not started yet (a repeating task stops repeating).
    /// Returns `true` on the first call.
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
