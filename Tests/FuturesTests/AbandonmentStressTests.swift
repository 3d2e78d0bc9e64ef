import Testing
@testable import Futures

/// Each test's rounds: `stressRounds` (a tenth under a sanitizer).
@Suite("Abandonment under contention", .serialized)
struct AbandonmentStressTests {
    init() { LeakWarnings.quiet() }

    @Test("a subscription and a callback whose token is cancelled while they register never stay behind")
    func cancelWhileRegistering() async {
        let leftovers = await offPool {
            let count = stressRounds(20_000)
            let streams = (0..<count).map { _ in StreamPromise<Int>() }
            let futures = (0..<count).map { _ in Promise<Int>() }
            let tokens = (0..<count).map { _ in CancelToken() }
            onThreads(2) { thread in
                for index in 0..<count {
                    if thread == 0 {
                        streams[index].stream.onSuccess(context: .immediate, cancelToken: tokens[index]) { _ in }
                        futures[index].future.onSuccess(context: .immediate, cancelToken: tokens[index]) { _ in }
                    } else {
                        tokens[index].cancel()
                    }
                }
            }
            return (0..<count).filter {
                streams[$0].stream.subscriberCount != 0 || futures[$0].future.waitingCallbackCount != 0
            }.count
        }
        #expect(leftovers == 0)
    }

    @Test("abandonment handlers run exactly once when the last two subscriptions are cancelled at the same time")
    func concurrentLastCancels() async {
        let runs = await offPool {
            let count = stressRounds(20_000)
            let calls = AtomicCount()
            let streams = (0..<count).map { _ in StreamPromise<Int>() }
            let tokens = (0..<count).map { _ in (CancelToken(), CancelToken()) }
            for index in 0..<count {
                streams[index].onAbandoned { calls.increment() }
                streams[index].stream.onSuccess(context: .immediate, cancelToken: tokens[index].0) { _ in }
                streams[index].stream.onSuccess(context: .immediate, cancelToken: tokens[index].1) { _ in }
            }
            onThreads(2) { thread in
                for index in 0..<count { _ = thread == 0 ? tokens[index].0.cancel() : tokens[index].1.cancel() }
            }
            return (calls: calls.current, count: count)
        }
        #expect(runs.calls == runs.count)
    }
}
