// SystemClockTests: real-time work runs on its queue once due; a cancelled task never does.
import Dispatch
import Locking
import Testing
import Timing

@Suite("SystemClock")
struct SystemClockTests {
    @Test("scheduled work runs on the clock's queue after its delay")
    func fires() async {
        let queue = DispatchQueue(label: "system-clock-test")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let clock = SystemClock(queue: queue)
        let start = clock.now
        let (onQueue, elapsed) = await withCheckedContinuation { (c: CheckedContinuation<(Bool, Duration), Never>) in
            clock.schedule(after: .milliseconds(20)) { c.resume(returning: (DispatchQueue.getSpecific(key: key) == 7, clock.now - start)) }
        }
        #expect(onQueue)
        #expect(elapsed >= .milliseconds(20))
    }

    @Test("a task cancelled before its deadline never runs, and a cancelled repeating task stops")
    func cancelled() async {
        let clock = SystemClock(queue: DispatchQueue(label: "system-clock-cancel"))
        let ran = Locked(false)
        clock.schedule(after: .milliseconds(10)) { ran.withLock { $0 = true } }.cancel()
        // (ticks, the repeating task, resumed): the third tick cancels the task from its own handler.
        let state = Locked<(ticks: Int, task: ClockTask?, resumed: Bool)>((0, nil, false))
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let task = clock.repeating(every: .milliseconds(5)) {
                let (task, resume) = state.withLock { s -> (ClockTask?, Bool) in
                    s.ticks += 1
                    guard s.ticks >= 3, let task = s.task else { return (nil, false) }
                    defer { s.resumed = true }
                    return (task, !s.resumed)
                }
                task?.cancel()
                if resume { c.resume() }
            }
            state.withLock { $0.task = task }
        }
        let stopped = state.withLock { $0.ticks }
        // A later one-shot on the same serial queue runs after anything a live timer would have done.
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            clock.schedule(after: .milliseconds(30)) { c.resume() }
        }
        #expect(!ran.withLock { $0 })
        #expect(state.withLock { $0.ticks } == stopped)
    }

    @Test("deadlines share one timer: work runs in deadline order, an earlier deadline re-arms it, cancelled work never runs")
    func sharedTimer() async {
        let queue = DispatchQueue(label: "system-clock-shared")
        let clock = SystemClock(queue: queue)
        let log = Locked<[String]>([])
        // Scheduled latest first: each new one is earlier than the armed deadline. On the
        // clock's queue, so that none can run before all three are scheduled (a thread preempted
        // between two calls on a loaded machine would otherwise see "c" run first; 100 ms apart,
        // so that a preemption inside the block cannot reorder the deadlines).
        queue.sync {
            clock.schedule(after: .milliseconds(300)) { log.withLock { $0.append("c") } }
            clock.schedule(after: .milliseconds(200)) { log.withLock { $0.append("b") } }
            clock.schedule(after: .milliseconds(100)) { log.withLock { $0.append("a") } }
        }
        // Many deadlines cancelled at once (the heap is compacted), due after the live ones (so
        // that a slow machine cannot reach them before their cancellation).
        for i in 0..<500 {
            clock.schedule(after: .milliseconds(400 + i % 50)) { log.withLock { $0.append("cancelled") } }.cancel()
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            clock.schedule(after: .milliseconds(500)) { c.resume() }
        }
        #expect(log.withLock { $0 } == ["a", "b", "c"])
    }

    @Test("work scheduled on a clock nobody keeps still runs at its deadline")
    func droppedClock() async {
        let ran = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            SystemClock(queue: DispatchQueue(label: "system-clock-dropped")).schedule(after: .milliseconds(10)) { c.resume(returning: true) }
        }
        #expect(ran)
    }
}
