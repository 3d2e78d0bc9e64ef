import Dispatch
import Testing
@testable import Futures

@Suite("Timeouts and retries")
struct TimingTests {
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
