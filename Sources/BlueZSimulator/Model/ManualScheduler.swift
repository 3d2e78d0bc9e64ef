// ManualScheduler: a test clock; timed work runs only when the test advances it.

import Locking

// MARK: - ManualScheduler

/// A deterministic scheduler for tests: `advance(by:)` runs, in time order and on the caller's
/// thread, every piece of work that has come due.
public final class ManualScheduler: SimulatorScheduler {
    private struct Entry {
        var id: Int
        var due: Duration
        var interval: Duration?
        var work: @Sendable () -> Void
    }

    private struct State {
        var now: Duration = .zero
        var nextID = 0
        var entries: [Int: Entry] = [:]
    }

    private let state = Locked(State())

    /// A clock at zero.
    public init() {}

    private final class Handle: ScheduledWork {
        let id: Int
        weak let owner: ManualScheduler?
        init(id: Int, owner: ManualScheduler) { self.id = id; self.owner = owner }
        func cancel() { _ = owner?.state.withLock { $0.entries.removeValue(forKey: id) } }
    }

    /// The current simulated time.
    public var now: Duration { state.withLock { $0.now } }

    /// Number of pending entries.
    public var pendingCount: Int { state.withLock { $0.entries.count } }

    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        add(delay: delay, interval: nil, work)
    }

    public func repeating(every interval: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        add(delay: interval, interval: interval, work)
    }

    private func add(delay: Duration, interval: Duration?, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let id = state.withLock { s in
            s.nextID += 1
            s.entries[s.nextID] = Entry(id: s.nextID, due: s.now + delay, interval: interval, work: work)
            return s.nextID
        }
        return Handle(id: id, owner: self)
    }

    /// Moves the clock forward by `delta`, running due work (the lock is not held while it runs).
    public func advance(by delta: Duration) {
        let target = state.withLock { $0.now + delta }
        while true {
            let next: Entry? = state.withLock { s in
                guard let e = s.entries.values.filter({ $0.due <= target }).min(by: { ($0.due, $0.id) < ($1.due, $1.id) })
                else { return nil }
                s.now = max(s.now, e.due)
                if let interval = e.interval {
                    s.entries[e.id]?.due = e.due + interval
                } else {
                    s.entries.removeValue(forKey: e.id)
                }
                return e
            }
            guard let entry = next else { break }
            entry.work()
        }
        state.withLock { $0.now = target }
    }
}
