// ManualClockTests: due work runs in deadline order on advance, and only then.
import Locking
import Testing
import Timing

/// Records the order work ran in.
private final class Log: Sendable {
    private let items = Locked<[String]>([])
    func append(_ item: String) { items.withLock { $0.append(item) } }
    var all: [String] { items.withLock { $0 } }
}

@Suite("ManualClock")
struct ManualClockTests {
    @Test("advance runs the work that falls due in deadline order, equal deadlines in scheduling order")
    func order() {
        let clock = ManualClock()
        let log = Log()
        clock.schedule(after: .milliseconds(30)) { log.append("c") }
        clock.schedule(after: .milliseconds(10)) { log.append("a") }
        clock.schedule(after: .milliseconds(10)) { log.append("b") }
        clock.schedule(after: .milliseconds(31)) { log.append("late") }
        #expect(clock.advance(by: .milliseconds(9)) == 0)
        #expect(log.all.isEmpty)
        #expect(clock.advance(by: .milliseconds(21)) == 3)
        #expect(log.all == ["a", "b", "c"])
        #expect(clock.now == .milliseconds(30))
        #expect(clock.pendingCount == 1)
        #expect(clock.nextDeadline == .milliseconds(31))
    }

    @Test("the clock reads each work's deadline while it runs, and the target after")
    func nowDuringWork() {
        let clock = ManualClock()
        let seen = Locked<[Duration]>([])
        clock.schedule(after: .seconds(2)) { seen.withLock { $0.append(clock.now) } }
        clock.schedule(after: .seconds(5)) { seen.withLock { $0.append(clock.now) } }
        clock.advance(by: .seconds(10))
        #expect(seen.withLock { $0 } == [.seconds(2), .seconds(5)])
        #expect(clock.now == .seconds(10))
    }

    @Test("a cancelled task never runs and stops counting as pending")
    func cancel() {
        let clock = ManualClock()
        let log = Log()
        let task = clock.schedule(after: .seconds(1)) { log.append("ran") }
        #expect(clock.pendingCount == 1)
        #expect(task.cancel())
        #expect(!task.cancel())
        #expect(task.isCancelled)
        #expect(clock.pendingCount == 0)
        clock.advance(by: .seconds(5))
        #expect(log.all.isEmpty)
    }

    @Test("work scheduled while advancing runs in the same advance when it falls due before the target")
    func chained() {
        let clock = ManualClock()
        let log = Log()
        clock.schedule(after: .milliseconds(100)) {
            log.append("first")
            clock.schedule(after: .milliseconds(50)) { log.append("second") }
            clock.schedule(after: .milliseconds(500)) { log.append("third") }
        }
        clock.advance(by: .milliseconds(200))
        #expect(log.all == ["first", "second"])
        clock.advance(by: .milliseconds(400))
        #expect(log.all == ["first", "second", "third"])
    }

    @Test("repeating work runs once per elapsed interval until cancelled")
    func repeating() {
        let clock = ManualClock()
        let count = Locked(0)
        let task = clock.repeating(every: .milliseconds(10)) { count.withLock { $0 += 1 } }
        clock.advance(by: .milliseconds(35))
        #expect(count.withLock { $0 } == 3)
        task.cancel()
        clock.advance(by: .milliseconds(100))
        #expect(count.withLock { $0 } == 3)
        #expect(clock.pendingCount == 0)
    }

    @Test("waitForPending returns when the work is scheduled from another task, and when the waiting task is cancelled")
    func waitForPending() async {
        let clock = ManualClock()
        let ended = Locked<[String]>([])
        // Satisfied: the work arrives after the task waits.
        let satisfied = Task {
            await clock.waitForPending(atLeast: 2)
            ended.withLock { $0.append("satisfied") }
        }
        // Never satisfied: only cancellation ends it (a test's time limit does that).
        let cancelled = Task {
            await clock.waitForPending(atLeast: 100)
            ended.withLock { $0.append("cancelled") }
        }
        clock.schedule(after: .seconds(1)) {}
        clock.schedule(after: .seconds(2)) {}
        await satisfied.value
        #expect(ended.withLock { $0 } == ["satisfied"])
        cancelled.cancel()
        await cancelled.value
        #expect(ended.withLock { $0 } == ["satisfied", "cancelled"])
        // A task cancelled before it waits does not wait.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await clock.waitForPending(atLeast: 100)
        }
        await early.value
    }

    @Test("a ManualClock's backstop margin is long: real time never decides before the test; the system clock's is 2 s")
    func backstopMargins() {
        #expect(ManualClock().backstop(for: .milliseconds(100)) == .milliseconds(100) + .seconds(120))
        #expect(SystemClock.shared.backstop(for: .milliseconds(100)) == .milliseconds(2_100))
    }
}
