// ClockDriven: the one way the central role arms a timer.
import Futures
import Timing

// MARK: - ClockDriven

/// An object whose timers (timeouts, backoff, delays; never polling) run on its manager's clock.
protocol ClockDriven {
    var clock: any TimerClock { get }
}

extension ClockDriven {
    /// Runs `body` after `delay` on ``clock``. Cancelling the returned task before the deadline
    /// unschedules `body` and releases it (and what it captured) at once; every operation
    /// deadline is cancelled when its operation ends.
    @discardableResult
    func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTask {
        clock.schedule(after: delay, body)
    }
}

extension CentralManager: ClockDriven {}
extension Peripheral: ClockDriven {}
