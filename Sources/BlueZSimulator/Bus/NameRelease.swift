// NameRelease: a one-shot "the name has no owner now" event, awaited with a deadline.

import Locking
import Timing

// MARK: - NameRelease

/// Fired when the name is seen without an owner (a name-owner watch reporting nil);
/// ``wait(timeout:)`` returns true once it fired (before or during the wait), false when
/// `timeout` passed first. Used by
/// ``BlueZSimulator/restart()``: the daemon releases the old connection's name only when it has
/// processed that connection's close, which can come after the new connection's request.
final class NameRelease: Sendable {
    private struct State {
        var fired = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Locked(State())

    /// Marks the name released and wakes a waiter.
    func fire() {
        let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            s.fired = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Whether the name was released within `timeout` on `clock` (the simulator's). One waiter
    /// at a time.
    func wait(timeout: Duration, clock: any TimerClock) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let firedAlready = state.withLock { s -> Bool in
                if s.fired { return true }
                s.waiter = continuation
                return false
            }
            if firedAlready { return continuation.resume(returning: true) }
            clock.schedule(after: timeout) { [self] in
                let expired = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                    defer { s.waiter = nil }
                    return s.waiter
                }
                expired?.resume(returning: false)
            }
        }
    }
}
