import Testing
@testable import Futures

@Suite("FutureStream timing operators")
struct TimingOperatorTests {
    init() { LeakWarnings.quiet() }

    @Test("timeout passes results, restarts its interval at each one, then fails with the interval and ends, releasing the source")
    func timeoutFires() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let seen = record(source.stream.timeout(after: .seconds(2), context: context))
        context.advance(by: .seconds(1))
        source.success(1)
        context.advance(by: .milliseconds(1_999))
        source.failure(TestError(code: 2))
        context.advance(by: .milliseconds(1_999))
        #expect(seen.values == ["v1", "e2"])
        context.advance(by: .milliseconds(1))
        #expect(seen.values == ["v1", "e2", "\(FuturesError.timeout(after: .seconds(2)))", "end"])
        #expect(seen.values[2].contains("2 s"))
        #expect(source.isAbandoned)
        source.success(3)
        context.run()
        #expect(seen.count == 4)
    }

    @Test("timeout finishes with its source and cancels its timer")
    func timeoutFinishes() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let seen = record(source.stream.timeout(after: 0.5, context: context))
        source.success(1)
        source.finish()
        context.run()
        #expect(seen.values == ["v1", "end"])
        #expect(context.pendingCount == 0)
    }

    @Test("abandoning a stream timeout cancels its timer and releases the source")
    func timeoutAbandoned() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let token = CancelToken()
        _ = record(source.stream.timeout(after: .seconds(1), context: context), cancelToken: token)
        #expect(context.pendingCount == 1)
        token.cancel()
        #expect(context.pendingCount == 0)
        #expect(source.isAbandoned)
    }

    @Test("debounce passes the last of a burst once the interval has passed without another, and flushes at the end")
    func debounce() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let seen = record(source.stream.debounce(.seconds(1), context: context))
        source.success(1)
        context.advance(by: .milliseconds(500))
        source.failure(TestError(code: 2))
        context.advance(by: .milliseconds(500))
        source.success(3)
        context.advance(by: .milliseconds(999))
        #expect(seen.values.isEmpty)
        context.advance(by: .milliseconds(1))
        #expect(seen.values == ["v3"])
        source.success(4)
        source.finish()
        context.run()
        #expect(seen.values == ["v3", "v4", "end"])
        #expect(context.pendingCount == 0)
    }

    @Test("abandoning a debounce drops the waiting result, cancels its timer and releases the source")
    func debounceAbandoned() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let token = CancelToken()
        let seen = record(source.stream.debounce(.seconds(1), context: context), cancelToken: token)
        source.success(1)
        context.run()
        #expect(context.pendingCount == 1)
        token.cancel()
        #expect(context.pendingCount == 0 && source.isAbandoned)
        context.advance(by: .seconds(2))
        #expect(seen.values.isEmpty)
    }

    @Test("throttle passes a result at once, the latest of an interval when it ends, and nothing when the interval was quiet")
    func throttle() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let seen = record(source.stream.throttle(.seconds(1), context: context))
        source.success(1)
        context.run()
        #expect(seen.values == ["v1"])
        source.success(2)
        source.failure(TestError(code: 3))
        context.advance(by: .milliseconds(999))
        #expect(seen.values == ["v1"])
        context.advance(by: .milliseconds(1))
        #expect(seen.values == ["v1", "e3"])
        context.advance(by: .seconds(1))  // a quiet interval: it closes
        source.success(4)
        context.run()
        #expect(seen.values == ["v1", "e3", "v4"])
        source.success(5)
        source.finish()
        context.run()
        #expect(seen.values == ["v1", "e3", "v4", "v5", "end"])
        #expect(context.pendingCount == 0)
    }

    @Test("abandoning a throttle cancels its timer and releases the source")
    func throttleAbandoned() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let token = CancelToken()
        _ = record(source.stream.throttle(.seconds(1), context: context), cancelToken: token)
        source.success(1)
        context.run()
        token.cancel()
        #expect(context.pendingCount == 0 && source.isAbandoned)
    }

    @Test("the Double-seconds overloads schedule the same virtual deadlines")
    func doubleSeconds() {
        let context = ManualContext()
        let promise = Promise<Int>()
        let limited = promise.future.timeout(after: 1.5, context: context)
        context.advance(by: .milliseconds(1_499))
        #expect(limited.result == nil)
        context.advance(by: .milliseconds(1))
        #expect(limited.result?.failureValue as? FuturesError == .timeout(after: .milliseconds(1_500)))
        let attempts = AtomicCount()
        let retried = Future<Int>.retry(times: 1, delay: 0.25, context: context) {
            attempts.increment()
            return Future(error: TestError(code: 1))
        }
        context.run()
        context.advance(by: .milliseconds(249))
        #expect(attempts.current == 1)
        context.advance(by: .milliseconds(1))
        #expect(attempts.current == 2)
        #expect(retried.result?.failureValue as? TestError == TestError(code: 1))

        let source = StreamPromise<Int>()
        let debounced = record(source.stream.debounce(0.5, context: context))
        let throttled = record(source.stream.throttle(0.5, context: context))
        source.success(1)
        source.success(2)
        context.run()
        #expect(debounced.values.isEmpty && throttled.values == ["v1"])
        context.advance(by: .milliseconds(500))
        #expect(debounced.values == ["v2"] && throttled.values == ["v1", "v2"])
    }
}
