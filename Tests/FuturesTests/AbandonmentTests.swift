import Testing
@testable import Futures

/// Abandonment: a consumer that stops consuming releases its upstream, all the way up.
@Suite("Abandonment")
struct AbandonmentTests {
    init() { LeakWarnings.quiet() }

    // MARK: Streams

    @Test("a stream whose only subscription is cancelled is abandoned, once, and its handler runs")
    func singleSubscriber() {
        let promise = StreamPromise<Int>()
        let calls = AtomicCount()
        promise.onAbandoned { calls.increment() }
        let token = CancelToken()
        promise.stream.onSuccess(context: .immediate, cancelToken: token) { _ in }
        #expect(!promise.isAbandoned)
        token.cancel()
        #expect(promise.isAbandoned)
        #expect(calls.current == 1)
        token.cancel()
        #expect(calls.current == 1)
    }

    @Test("a stream nobody ever subscribed to is not abandoned; a handler added after abandonment runs at once")
    func neverSubscribedAndLateHandler() {
        let promise = StreamPromise<Int>()
        let calls = AtomicCount()
        promise.onAbandoned { calls.increment() }
        #expect(!promise.isAbandoned && calls.current == 0)
        let token = CancelToken()
        promise.stream.onSuccess(context: .immediate, cancelToken: token) { _ in }
        token.cancel()
        promise.onAbandoned { calls.increment() }
        #expect(calls.current == 2)
    }

    @Test("with several subscriptions the stream is abandoned only when the last one is cancelled")
    func multipleSubscribers() {
        let promise = StreamPromise<Int>()
        let calls = AtomicCount()
        promise.onAbandoned { calls.increment() }
        let first = CancelToken(), second = CancelToken()
        promise.stream.onSuccess(context: .immediate, cancelToken: first) { _ in }
        promise.stream.onSuccess(context: .immediate, cancelToken: second) { _ in }
        first.cancel()
        #expect(calls.current == 0)
        second.cancel()
        #expect(calls.current == 1)
    }

    @Test("a subscription without a token keeps the stream wanted; a finished stream is never abandoned")
    func permanentInterestAndFinish() {
        let promise = StreamPromise<Int>()
        let calls = AtomicCount()
        promise.onAbandoned { calls.increment() }
        let token = CancelToken()
        promise.stream.onSuccess(context: .immediate) { _ in }
        promise.stream.onSuccess(context: .immediate, cancelToken: token) { _ in }
        token.cancel()
        #expect(calls.current == 0)

        let finished = StreamPromise<Int>()
        finished.onAbandoned { calls.increment() }
        let other = CancelToken()
        finished.stream.onSuccess(context: .immediate, cancelToken: other) { _ in }
        finished.finish()
        other.cancel()
        #expect(calls.current == 0 && !finished.isAbandoned)
    }

    @Test("first() releases the stream after its result; take(n) after the n-th")
    func firstAndTake() {
        let source = StreamPromise<Int>()
        let calls = AtomicCount()
        source.onAbandoned { calls.increment() }
        let first = source.stream.first()
        #expect(calls.current == 0)
        source.success(1)
        #expect(first.result?.successValue == 1)
        #expect(calls.current == 1)

        let other = StreamPromise<Int>()
        other.onAbandoned { calls.increment() }
        let taken = other.stream.take(2)
        let seen = Recorder<Int>()
        taken.onSuccess(context: .immediate) { seen.append($0) }
        other.success(1)
        #expect(calls.current == 1)
        other.success(2)
        #expect(calls.current == 2)
        #expect(seen.values == [1, 2])
        #expect(taken.isFinished)
    }

    @Test("abandonment travels up a chain of map, withFilter and flatMap to the source")
    func chain() {
        let source = StreamPromise<Int>()
        let calls = AtomicCount()
        source.onAbandoned { calls.increment() }
        let inner = StreamPromise<Int>()
        inner.onAbandoned { calls.increment() }
        let derived = source.stream
            .map(context: .immediate) { $0 * 2 }
            .withFilter(context: .immediate) { $0 > 0 }
            .flatMap(context: .immediate) { _ in inner.stream }
        let token = CancelToken()
        let seen = Recorder<Int>()
        derived.onSuccess(context: .immediate, cancelToken: token) { seen.append($0) }
        source.success(1)
        inner.success(7)
        #expect(seen.values == [7])
        token.cancel()
        #expect(source.isAbandoned && inner.isAbandoned)
        #expect(calls.current == 2)
        #expect(source.stream.subscriberCount == 0)
    }

    @Test("a long chain abandoned from its end releases its source in constant stack")
    func longChain() async {
        let released = await offPool {
            let source = StreamPromise<Int>()
            var stream = source.stream
            for _ in 0..<20_000 { stream = stream.map(context: .immediate) { $0 } }
            let token = CancelToken()
            stream.onSuccess(context: .immediate, cancelToken: token) { _ in }
            token.cancel()
            return source.isAbandoned
        }
        #expect(released)
    }

    @Test("ending an async iteration over values or results releases the stream")
    func asyncIterationEnd() async throws {
        for useResults in [false, true] {
            let promise = StreamPromise<Int>()
            let abandoned = Latch()
            promise.onAbandoned { abandoned.signal() }
            promise.success(1)
            if useResults {
                for await _ in promise.stream.results { break }
            } else {
                for try await _ in promise.stream.values { break }
            }
            #expect(abandoned.wait())
        }
    }

    // MARK: Futures

    @Test("a future whose every callback was cancelled is abandoned; a callback without a token keeps it wanted")
    func futureAbandonment() {
        let promise = Promise<Int>()
        let calls = AtomicCount()
        promise.onAbandoned { calls.increment() }
        let first = CancelToken(), second = CancelToken()
        promise.future.onSuccess(context: .immediate, cancelToken: first) { _ in }
        promise.future.onSuccess(context: .immediate, cancelToken: second) { _ in }
        first.cancel()
        #expect(calls.current == 0)
        second.cancel()
        #expect(calls.current == 1 && promise.isAbandoned)

        let kept = Promise<Int>()
        kept.onAbandoned { calls.increment() }
        let token = CancelToken()
        kept.future.onSuccess(context: .immediate) { _ in }
        kept.future.onSuccess(context: .immediate, cancelToken: token) { _ in }
        token.cancel()
        #expect(calls.current == 1 && !kept.isAbandoned)
    }

    @Test("a completed future is never abandoned and releases its handler")
    func completedNotAbandoned() {
        let promise = Promise<Int>()
        let calls = AtomicCount()
        promise.onAbandoned { calls.increment() }
        let token = CancelToken()
        promise.future.onSuccess(context: .immediate, cancelToken: token) { _ in }
        promise.success(1)
        token.cancel()
        #expect(calls.current == 0 && !promise.isAbandoned)
    }

    @Test("abandonment travels up map, withFilter and flatMap chains of futures")
    func futureChain() {
        let source = Promise<Int>()
        let inner = Promise<Int>()
        let calls = AtomicCount()
        source.onAbandoned { calls.increment() }
        inner.onAbandoned { calls.increment() }
        let derived = source.future
            .map(context: .immediate) { $0 + 1 }
            .withFilter(context: .immediate) { $0 > 0 }
        let token = CancelToken()
        derived.onSuccess(context: .immediate, cancelToken: token) { _ in }
        token.cancel()
        #expect(source.isAbandoned && calls.current == 1)

        let outer = Promise<Int>()
        let flat = outer.future.flatMap(context: .immediate) { _ in inner.future }
        let other = CancelToken()
        flat.onSuccess(context: .immediate, cancelToken: other) { _ in }
        outer.success(1)
        other.cancel()
        #expect(inner.isAbandoned && calls.current == 2)
    }

    @Test("a timeout that fires releases the future it wraps, and through first() the stream")
    func timeoutReleases() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let calls = AtomicCount()
        source.onAbandoned { calls.increment() }
        let limited = source.stream.first().timeout(after: .seconds(2), context: context)
        limited.onComplete(context: .immediate) { _ in }
        context.advance(by: .seconds(1))
        #expect(calls.current == 0)
        context.advance(by: .seconds(1))
        #expect(limited.result?.failureValue as? FuturesError == .timeout(after: .seconds(2)))
        #expect(calls.current == 1)
        #expect(source.stream.subscriberCount == 0)
    }

    @Test("two consumers of one timeout-limited future: the wrapped future is released only when both are gone")
    func timeoutWithOtherConsumer() {
        let context = ManualContext()
        let promise = Promise<Int>()
        let calls = AtomicCount()
        promise.onAbandoned { calls.increment() }
        let token = CancelToken()
        promise.future.onSuccess(context: .immediate, cancelToken: token) { _ in }
        _ = promise.future.timeout(after: .seconds(1), context: context)
        context.advance(by: .seconds(1))
        #expect(calls.current == 0)
        token.cancel()
        #expect(calls.current == 1)
    }

    @Test("cancelling the task awaiting a future's value abandons the future")
    func awaitCancelled() async {
        let promise = Promise<Int>()
        let abandoned = Latch()
        promise.onAbandoned { abandoned.signal() }
        let waiter = Task { try await promise.future.value }
        while promise.future.waitingCallbackCount == 0 { await Task.yield() }
        waiter.cancel()
        #expect(abandoned.wait())
        #expect(await (try? waiter.value) == nil)
    }
}
