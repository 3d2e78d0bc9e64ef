import Dispatch
import Testing
@testable import Futures
import Timing

@Suite("Execution contexts")
struct ContextTests {
    init() { LeakWarnings.quiet() }

    @Test("the immediate context runs callbacks on the completing thread, synchronously")
    func immediate() {
        let promise = Promise<Int>()
        let thread = Recorder<Bool>()
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "completer")
        queue.setSpecific(key: key, value: 1)
        promise.future.onComplete(context: .immediate) { _ in thread.append(DispatchQueue.getSpecific(key: key) == 1) }
        queue.sync { _ = promise.success(1) }
        #expect(thread.values == [true])
    }

    @Test("nested immediate callbacks run after the current one, in order")
    func trampolineOrder() {
        let order = Recorder<String>()
        let inner = Promise<Int>()
        inner.future.onComplete(context: .immediate) { _ in order.append("inner") }
        Future(value: 0).onComplete(context: .immediate) { _ in
            order.append("outer-start")
            inner.success(1)
            order.append("outer-end")
        }
        #expect(order.values == ["outer-start", "outer-end", "inner"])
    }

    @Test("a queue context runs callbacks on its queue")
    func queueContext() {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "callbacks")
        queue.setSpecific(key: key, value: 42)
        let latch = Latch()
        let seen = Recorder<Int?>()
        Future(value: 1).onComplete(context: QueueContext(queue: queue)) { _ in
            seen.append(DispatchQueue.getSpecific(key: key))
            latch.signal()
        }
        #expect(latch.wait())
        #expect(seen.values == [42])
    }

    @Test("the default context is the library's own serial queue, not main, and it runs")
    func defaultContext() {
        #expect(QueueContext.futuresDefault.queue !== DispatchQueue.main)
        #expect(QueueContext.futuresDefault.queue.label == "bluecap.futures.default")
        let latch = Latch()
        Future(value: 1).onComplete { _ in latch.signal() }
        #expect(latch.wait())
    }

    @Test("a manual context runs tasks only when asked, and timers on its virtual clock")
    func manualContext() {
        let context = ManualContext()
        let order = Recorder<String>()
        context.execute(after: .milliseconds(20)) { order.append("t20") }
        context.execute(after: .milliseconds(10)) { order.append("t10") }
        context.execute { order.append("now") }
        #expect(order.values.isEmpty)
        #expect(context.pendingCount == 3)
        #expect(context.run() == 1)
        #expect(context.advance(by: .milliseconds(15)) == 1)
        #expect(order.values == ["now", "t10"])
        #expect(context.now == .milliseconds(15))
        context.advance(by: .milliseconds(5))
        #expect(order.values == ["now", "t10", "t20"])
        #expect(context.pendingCount == 0)
    }

    @Test("a manual context on a shared ManualClock: the clock's other work and the context's timers run in one deadline order, by either's advance")
    func manualContextSharesItsClock() {
        let clock = ManualClock()
        let context = ManualContext(clock: clock)
        let order = Recorder<String>()
        let timeout = Promise<Int>().future.timeout(after: .milliseconds(30), context: context)
        timeout.onFailure(context: context) { order.append("timeout \($0)") }
        clock.schedule(after: .milliseconds(20)) { order.append("clock 20") }
        context.execute(after: .milliseconds(10)) { order.append("context 10") }
        #expect(context.pendingCount == 3 && clock.pendingCount == 3)
        // The clock's own advance runs the context's timers, and the tasks they queue right after.
        #expect(clock.advance(by: .milliseconds(25)) == 2)
        #expect(order.values == ["context 10", "clock 20"])
        #expect(context.now == .milliseconds(25))
        #expect(context.advance(by: .milliseconds(5)) == 2)
        #expect(order.values == ["context 10", "clock 20", "timeout \(FuturesError.timeout(after: .milliseconds(30)))"])
        #expect(context.pendingCount == 0)
    }

    @Test("ScheduledTask is Timing's ClockTask: a context's timer handle and a clock's are one type")
    func scheduledTaskIsClockTask() {
        let clock = ManualClock()
        let handle: ClockTask = ManualContext(clock: clock).schedule(after: .seconds(1)) {}
        let same: ScheduledTask = handle
        #expect(clock.pendingCount == 1)
        #expect(same.cancel())
        #expect(clock.pendingCount == 0 && handle.isCancelled)
    }

    @Test("the default delayed execution hops onto the context after the delay")
    func defaultDelayedExecution() {
        struct Inline: ExecutionContext {
            func execute(_ task: @escaping @Sendable () -> Void) { task() }
        }
        let latch = Latch()
        let start = DispatchTime.now()
        Inline().execute(after: .milliseconds(10)) { latch.signal() }
        #expect(latch.wait())
        #expect(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds >= 10_000_000)
    }
}
