import Testing
@testable import Futures

/// Abandonment through the combinators that wait on several futures, or on futures they start
/// themselves: abandoning the result tells every upstream future still pending to stop.
@Suite("Abandonment through combinators")
struct CombinatorAbandonmentTests {
    init() { LeakWarnings.quiet() }

    /// Pending promises, each counting its abandonment in `calls`.
    private func pendingPromises(_ count: Int, counting calls: AtomicCount) -> [Promise<Int>] {
        (0..<count).map { _ in
            let promise = Promise<Int>()
            promise.onAbandoned { calls.increment() }
            return promise
        }
    }

    /// Waits on `future` with a callback that `token` removes.
    private func consume<T>(_ future: Future<T>, until token: CancelToken) {
        future.onComplete(context: .immediate, cancelToken: token) { _ in }
    }

    // MARK: Futures

    @Test("abandoning zip's future abandons both futures while they are pending")
    func zip() {
        let calls = AtomicCount()
        let promises = pendingPromises(2, counting: calls)
        let pair = promises[0].future.zip(promises[1].future)
        let token = CancelToken()
        consume(pair, until: token)
        token.cancel()
        #expect(pair.isAbandoned)
        #expect(promises[0].isAbandoned && promises[1].isAbandoned)
        #expect(calls.current == 2)
    }

    @Test("abandoning sequence's future abandons every element still pending")
    func sequence() {
        let calls = AtomicCount()
        let promises = pendingPromises(3, counting: calls)
        let all = promises.map(\.future).sequence(context: .immediate)
        let token = CancelToken()
        consume(all, until: token)
        promises[1].success(1)
        token.cancel()
        #expect(all.isAbandoned)
        #expect(promises[0].isAbandoned && !promises[1].isAbandoned && promises[2].isAbandoned)
        #expect(calls.current == 2)
        #expect(promises[0].future.waitingCallbackCount == 0 && promises[2].future.waitingCallbackCount == 0)
    }

    @Test("abandoning traverse's future abandons every future it started that is still pending")
    func traverse() {
        let calls = AtomicCount()
        let promises = pendingPromises(3, counting: calls)
        let all = [0, 1, 2].traverse(context: .immediate) { promises[$0].future }
        let token = CancelToken()
        consume(all, until: token)
        promises[0].success(0)
        token.cancel()
        #expect(!promises[0].isAbandoned && promises[1].isAbandoned && promises[2].isAbandoned)
        #expect(calls.current == 2)
    }

    @Test("abandoning fold's future abandons every element still pending, reached or not")
    func fold() {
        let calls = AtomicCount()
        let promises = pendingPromises(3, counting: calls)
        let folded = promises.map(\.future).fold(context: .immediate, initial: 0) { $0 + $1 }
        let token = CancelToken()
        consume(folded, until: token)
        promises[1].success(1)
        token.cancel()
        #expect(folded.isAbandoned)
        #expect(promises[0].isAbandoned && !promises[1].isAbandoned && promises[2].isAbandoned)
        #expect(calls.current == 2)
    }

    @Test("abandoning retry's future abandons the pending attempt, and no other attempt starts")
    func retry() {
        let context = ManualContext()
        let attempts = Recorder<Promise<Int>>()
        let retried = Future<Int>.retry(times: 3, context: context) {
            let attempt = Promise<Int>()
            attempts.append(attempt)
            return attempt.future
        }
        let token = CancelToken()
        consume(retried, until: token)
        context.run()
        #expect(attempts.count == 1)
        token.cancel()
        #expect(attempts.values[0].isAbandoned)
        attempts.values[0].failure(TestError(code: 1))
        context.run()
        #expect(attempts.count == 1)
    }

    @Test("abandoning retry's future during the delay cancels the pending retry")
    func retryDuringDelay() {
        let context = ManualContext()
        let attempts = Recorder<Promise<Int>>()
        let retried = Future<Int>.retry(times: 3, delay: .seconds(1), context: context) {
            let attempt = Promise<Int>()
            attempts.append(attempt)
            return attempt.future
        }
        let token = CancelToken()
        consume(retried, until: token)
        context.run()
        attempts.values[0].failure(TestError(code: 1))
        #expect(context.pendingCount == 1)
        token.cancel()
        #expect(context.pendingCount == 0)
        context.advance(by: .seconds(2))
        #expect(attempts.count == 1)
    }

    // MARK: Streams

    @Test("abandoning a stream's flatMap to futures abandons the inner futures still pending")
    func streamFlatMapToFutures() {
        let source = StreamPromise<Int>()
        let calls = AtomicCount()
        let inner = pendingPromises(2, counting: calls)
        let derived = source.stream.flatMap(context: .immediate) { inner[$0].future }
        let token = CancelToken()
        let seen = Recorder<Int>()
        derived.onSuccess(context: .immediate, cancelToken: token) { seen.append($0) }
        source.success(0)
        source.success(1)
        inner[0].success(10)
        #expect(seen.values == [10])
        token.cancel()
        #expect(source.isAbandoned)
        #expect(!inner[0].isAbandoned && inner[1].isAbandoned)
        #expect(calls.current == 1)
    }

    @Test("abandoning a stream's recoverWith abandons the recovery futures still pending")
    func streamRecoverWith() {
        let source = StreamPromise<Int>()
        let calls = AtomicCount()
        let backup = pendingPromises(1, counting: calls)[0]
        let derived = source.stream.recoverWith(context: .immediate) { _ in backup.future }
        let token = CancelToken()
        derived.onComplete(context: .immediate, cancelToken: token) { _ in }
        source.failure(TestError(code: 1))
        token.cancel()
        #expect(source.isAbandoned && backup.isAbandoned)
        #expect(calls.current == 1)
    }
}
