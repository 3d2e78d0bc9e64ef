// ScheduledTask: the handle on a delayed task, the Timing module's ClockTask.
import Timing

// MARK: - ScheduledTask

/// A handle on a task scheduled with ``ExecutionContext/schedule(after:_:)``: cancelling it
/// before the deadline stops the task from running and releases it (and what it captured)
/// right away instead of at the deadline.
///
/// The same type as `Timing.ClockTask`: a context's timers and a manager's timers come from
/// one kind of clock (`SystemClock` in real time, `ManualClock` in tests).
public typealias ScheduledTask = ClockTask
