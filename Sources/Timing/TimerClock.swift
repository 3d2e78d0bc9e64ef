// TimerClock: the one source of time for timeouts, retries, backoff and simulated delays.

// MARK: - TimerClock

/// Runs work after a delay, or repeatedly: every timer of the library (connection, discovery,
/// read/write, scan and power-on timeouts, retry backoff, reconnection delays) and of
/// `BlueZSimulator` (connection and discovery delays, delayed replies, storms) goes through one.
///
/// Inject a ``ManualClock`` (into a `BluetoothSession`, which times its managers' deadlines, and
/// into `BlueZSimulator`) and every deadline falls due only when the test calls
/// ``ManualClock/advance(by:)``: timeouts are tested in microseconds, with no real sleeps and no
/// margins. ``SystemClock`` is the default.
public protocol TimerClock: AnyObject, Sendable {
    /// The time elapsed since the clock was created.
    var now: Duration { get }

    /// Runs `work` once, `delay` from ``now``, unless the returned task is cancelled first.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask

    /// Runs `work` every `interval` (first at ``now`` + `interval`) until the returned task is cancelled.
    @discardableResult
    func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask

    /// How much later than a deadline on this clock a real-time backstop for the same work fires
    /// (the timeout of the D-Bus call behind a read, a write or a connect, which ends the call
    /// if the clock's own timer never does). The clock's timer decides the outcome; the
    /// backstop only keeps a call from waiting forever. 2 seconds by default; a
    /// ``ManualClock``, whose deadlines fall due only when a test advances it, allows two
    /// minutes, so that a busy machine never lets real time decide before the test does.
    var backstopMargin: Duration { get }
}

extension TimerClock {
    /// 2 seconds: the clock follows real time, so its timer fires first.
    public var backstopMargin: Duration { .seconds(2) }

    /// The real-time timeout of a call whose deadline on this clock is `timeout` from now:
    /// `timeout` + ``backstopMargin``.
    public func backstop(for timeout: Duration) -> Duration { timeout + backstopMargin }
}

extension TimerClock where Self == SystemClock {
    /// Real time on a global dispatch queue.
    public static var system: SystemClock { SystemClock.shared }
}
