import Testing
@testable import Futures

@Suite("FutureStream.results")
struct StreamResultsTests {
    init() { LeakWarnings.quiet() }

    @Test("results yields success, failure and success, then ends when the stream finishes")
    func resultsYieldsEverything() async {
        let promise = StreamPromise<Int>()
        promise.success(1)
        promise.failure(TestError(code: 2))
        promise.success(3)
        promise.finish()
        var seen: [String] = []
        for await result in promise.stream.results {
            switch result {
            case .success(let value): seen.append("v\(value)")
            case .failure(let error): seen.append("e\((error as? TestError)?.code ?? -1)")
            }
        }
        #expect(seen == ["v1", "e2", "v3"])
    }

    @Test("values over the same stream throws at the failure, after the values before it")
    func valuesThrowsAtFailure() async {
        let promise = StreamPromise<Int>()
        promise.success(1)
        promise.failure(TestError(code: 2))
        promise.success(3)
        promise.finish()
        var seen: [Int] = []
        await #expect(throws: TestError(code: 2)) {
            for try await value in promise.stream.values { seen.append(value) }
        }
        #expect(seen == [1])
    }

    @Test("results goes on with live results after a failure until the stream finishes")
    func resultsLive() async {
        let promise = StreamPromise<Int>()
        let consumer = Task {
            var count = 0
            for await _ in promise.stream.results { count += 1 }
            return count
        }
        // Live pushes only after the consumer subscribed.
        while promise.stream.subscriberCount == 0 { await Task.yield() }
        promise.failure(TestError(code: 1))
        promise.success(2)
        promise.finish()
        #expect(await consumer.value == 2)
    }
}
