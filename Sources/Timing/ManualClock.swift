// ManualClock: a test clock; timed work runs only when the test advances it.
import Locking

// MARK: - ManualClock

/// A deterministic clock for tests: nothing runs until ``advance(by:)``, which runs every piece
/// of work that falls due, in deadline order (equal deadlines in scheduling order), on the
/// caller's thread, with the clock reading each deadline as its work runs. Work scheduled while
/// advancing runs in the same call if it falls due before the target.
public final class ManualClock: TimerClock {
    private struct Entry {
        let id: Int
        var due: Duration
        let interval: Duration?
        let work: @Sendable () -> Void
    }

    private struct State {
        var now: Duration = .zero
        var nextID = 0
        var entries: [Int: Entry] = [:]
    }

    // Sendable through this lock: every field of the clock lives inside it.
    private let state = Locked(State())
    /// Tasks suspended in ``waitForPending(atLeast:)``.
    private let pendingWaiters = CountWaiters()

    /// A clock reading zero.
    public init() {}

    /// The time advanced so far.
    public var now: Duration { state.withLock { $0.now } }

    /// The work scheduled and not yet run or cancelled (a repeating task counts once).
    public var pendingCount: Int { state.withLock { $0.entries.count } }

    /// Two minutes: the test decides when deadlines fall due, however long it takes in real
    /// time; a D-Bus call's backstop must not fire first on a busy machine.
    public var backstopMargin: Duration { .seconds(120) }

    /// The deadline of the next pending work, if any.
    public var nextDeadline: Duration? { state.withLock { $0.entries.values.map(\.due).min() } }

    /// Suspends until at least `count` pieces of work are pending (at once if they are): a test
    /// calls it before ``advance(by:)`` when the code under test arms its timer on another
    /// thread, instead of sleeping. A cancelled task stops waiting (a test past its time limit
    /// ends instead of hanging).
    public func waitForPending(atLeast count: Int) async {
        await pendingWaiters.wait(for: count) { [self] in pendingCount }
    }

    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        add(delay: delay, interval: nil, work)
    }

    @discardableResult
    public func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        add(delay: interval, interval: max(interval, .nanoseconds(1)), work)
    }

    /// Moves the clock forward by `duration`, running the work that falls due (the lock is not
    /// held while it runs). Returns how many pieces of work ran.
    @discardableResult
    public func advance(by duration: Duration) -> Int {
        let target = state.withLock { $0.now + duration }
        var count = 0
        while let entry = nextEntry(dueBy: target) {
            entry.work()
            count += 1
        }
        state.withLock { $0.now = max($0.now, target) }
        return count
    }

    private func add(delay: Duration, interval: Duration?, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        let (id, pending) = state.withLock { s -> (Int, Int) in
            s.nextID += 1
            s.entries[s.nextID] = Entry(id: s.nextID, due: s.now + max(delay, .zero), interval: interval, work: work)
            return (s.nextID, s.entries.count)
        }
        pendingWaiters.reached(pending)
        return ClockTask { [weak self] in
            // Removed under the lock and released after it (the work may own anything).
            let removed = self?.state.withLock { $0.entries.removeValue(forKey: id) }
            _ = removed
        }
    }

    /// Takes the earliest entry due by `target` (rescheduling a repeating one) and moves the
    /// clock to its deadline.
    private func nextEntry(dueBy target: Duration) -> Entry? {
        state.withLock { s in
            guard let next = s.entries.values.min(by: { ($0.due, $0.id) < ($1.due, $1.id) }),
                  next.due <= target else { return nil }
            s.now = max(s.now, next.due)
            if let interval = next.interval {
                s.entries[next.id]?.due = next.due + interval
            } else {
                s.entries.removeValue(forKey: next.id)
            }
            return next
        }
    }
}
