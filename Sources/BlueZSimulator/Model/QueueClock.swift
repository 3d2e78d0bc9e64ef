// QueueClock: a clock whose work runs on the simulator's queue.
import Dispatch
import Timing

// MARK: - QueueClock

/// Forwards to `base` and runs each piece of work on `queue`, where the simulator's model lives:
/// a `ManualClock` shared with the code under test runs due work on the thread that advances
/// it, and the model must not be touched from there.
final class QueueClock: TimerClock {
    let base: any TimerClock
    let queue: DispatchQueue

    init(_ base: any TimerClock, queue: DispatchQueue) {
        self.base = base
        self.queue = queue
    }

    var now: Duration { base.now }

    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        base.schedule(after: delay) { [queue] in queue.async(execute: work) }
    }

    @discardableResult
    func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        base.repeating(every: interval) { [queue] in queue.async(execute: work) }
    }
}
