import Dispatch
import Testing
@testable import Futures

@Suite("Timeouts and retries")
struct TimingTests {
    init() { LeakWarnings.quiet() }

    @Test("timeout fails with the typed error exactly when the virtual deadline passes")
    func timeoutFires() {
        let context = ManualContext()
        let promise = Promise<Int>()
        let limited = promise.future.timeout(after: .milliseconds(50), context: context)
        context.advance(by: .milliseconds(49))
        #expect(limited.result == nil)
        context.advance(by: .milliseconds(1))
        #expect(limited.result?.failureValue as? FuturesError == .timeout(after: .milliseconds(50)))
        #expect(!promise.future.isCompleted)
    }

    @Test("timeout passes the result through when the future completes first")
    func timeoutNotFired() {
        let context = ManualContext()
        let promise = Promise<Int>()
        let limited = promise.future.timeout(after: .milliseconds(50), context: context)
        promise.success(1)
        context.advance(by: .seconds(1))
        #expect(limited.result?.successValue == 1)
    }

    @Test("timeout cancels its timer when the future completes first: the manual context has nothing pending")
    func timeoutCancelsManualTimer() {
        let context = ManualContext()
        let promise = Promise<Int>()
        let limited = promise.future.timeout(after: .seconds(60), context: context)
        #expect(context.pendingCount == 1)
        promise.success(5)
        #expect(context.pendingCount == 0)
        #expect(limited.result?.successValue == 5)
        #expect(context.advance(by: .seconds(61)) == 0)
    }

    @Test("timeout on a queue context releases the timer's closure long before the deadline")
    func timeoutReleasesQueueTimer() {
        let released = Latch()
        do {
            let promise = Promise<Payload>()
            let limited = promise.future.timeout(after: .seconds(3600), context: QueueContext.global)
            promise.success(Payload { released.signal() })
            #expect(limited.result?.successValue != nil)
        }
        // The payload lives in the timed future's result, which the timer closure holds until the
        // timer is cancelled (or the deadline, an hour away, passes).
        #expect(released.wait(seconds: 5))
    }

    @Test("the default schedule(after:) of a custom context is cancellable and releases the task")
    func defaultScheduleCancels() {
        struct Inline: ExecutionContext {
            func execute(_ task: @escaping @Sendable () -> Void) { task() }
        }
        let released = Latch()
        let ran = AtomicCount()
        let handle: ScheduledTask
        do {
            let payload = Payload { released.signal() }
            handle = Inline().schedule(after: .seconds(3600)) { _ = payload; ran.increment() }
        }
        #expect(!handle.isCancelled)
        #expect(handle.cancel())
        #expect(!handle.cancel())
        #expect(handle.isCancelled)
        #expect(released.wait(seconds: 5))
        #expect(ran.current == 0)
    }

    @Test("a scheduled task that is not cancelled runs once at its deadline")
    func scheduleRuns() {
        let latch = Latch()
        let start = DispatchTime.now()
        let handle = QueueContext.global.schedule(after: .milliseconds(10)) { latch.signal() }
        #expect(latch.wait())
        #expect(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds >= 10_000_000)
        _ = handle
    }

    @Test("timeout on a real clock fires after a short deadline")
    func timeoutRealClock() async {
        let start = DispatchTime.now()
        await #expect(throws: FuturesError.timeout(after: .milliseconds(20))) {
            try await Promise<Int>().future.timeout(after: .milliseconds(20)).value
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds
        #expect(elapsed >= 20_000_000)
    }

    @Test("retry re-runs the attempt after each delay until it succeeds")
    func retrySucceeds() {
        let context = ManualContext()
        let attempts = AtomicCount()
        let result = Future<Int>.retry(times: 3, delay: .milliseconds(10), context: context) {
            let attempt = attempts.increment()
            return attempt < 3 ? Future(error: TestError(code: attempt)) : Future(value: attempt)
        }
        context.run()
        #expect(attempts.current == 1)
        context.advance(by: .milliseconds(9))
        #expect(attempts.current == 1)
        context.advance(by: .milliseconds(1))
        #expect(attempts.current == 2)
        context.advance(by: .milliseconds(10))
        #expect(attempts.current == 3)
        #expect(result.result?.successValue == 3)
        #expect(context.pendingCount == 0)
    }

    @Test("retry gives up after the last retry with the last error")
    func retryExhausted() {
        let context = ManualContext()
        let attempts = AtomicCount()
        let result = Future<Int>.retry(times: 2, context: context) {
            Future(error: TestError(code: attempts.increment()))
        }
        context.run()
        #expect(attempts.current == 3)
        #expect(result.result?.failureValue as? TestError == TestError(code: 3))
    }

    @Test("retry stops at an error the predicate refuses")
    func retryWhen() {
        let context = ManualContext()
        let attempts = AtomicCount()
        let result = Future<Int>.retry(times: 5, context: context, when: { ($0 as? TestError)?.code != 2 }) {
            Future(error: TestError(code: attempts.increment()))
        }
        context.run()
        #expect(attempts.current == 2)
        #expect(result.result?.failureValue as? TestError == TestError(code: 2))
    }

    @Test("retry with a real delay completes within a short deadline")
    func retryRealClock() async throws {
        let attempts = AtomicCount()
        let result = Future<Int>.retry(times: 2, delay: .milliseconds(5)) {
            attempts.increment() < 2 ? Future(error: TestError(code: 0)) : Future(value: 1)
        }
        #expect(try await awaitValue(result) == 1)
        #expect(attempts.current == 2)
    }
}

/// A value that reports its own deallocation.
private final class Payload: Sendable {
    private let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}
