// AsyncSequenceTypesTests: FutureStream.Values and FutureStream.Results, as a user iterates them.
import Dispatch
import Locking
import Testing
@testable import Futures

// MARK: - JobCountingExecutor

/// A task executor that counts the jobs enqueued on it: a task preferring it enqueues one job
/// to start and one more for every suspension it resumes from.
final class JobCountingExecutor: TaskExecutor {
    private let jobs = Locked(0)
    private let queue = DispatchQueue(label: "JobCountingExecutor")

    var count: Int { jobs.withLock { $0 } }

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.withLock { $0 += 1 }
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

// MARK: - Collector

/// Iterates on its own isolation (`for try await` passes it to `next(isolation:)`).
actor Collector {
    private(set) var seen: [Int] = []

    func collect(_ values: FutureStream<Int>.Values) async throws -> [Int] {
        for try await value in values { seen.append(value) }
        return seen
    }
}

// MARK: - Tests

@Suite("FutureStream.Values and .Results")
struct AsyncSequenceTypesTests {
    init() { LeakWarnings.quiet() }

    @Test("a buffered backlog is drained in order without a single suspension")
    func backlogWithoutSuspension() async throws {
        let promise = StreamPromise<Int>()
        let values = promise.stream.values
        let results = promise.stream.results
        for value in 0..<500 { promise.success(value) }
        promise.finish()
        let executor = JobCountingExecutor()
        let drained = try await Task(executorPreference: executor) {
            var out: [Int] = []
            for try await value in values { out.append(value) }
            for await result in results { out.append(try result.get()) }
            return out
        }.value
        #expect(drained == Array(0..<500) + Array(0..<500))
        // The task's start, and nothing else: no element was waited for.
        #expect(executor.count == 1)
    }

    @Test("values pushed beyond the backlog drop the oldest; the producer never waits")
    func overflowDropsOldest() async throws {
        let promise = StreamPromise<Int>(capacity: 1_500)
        #expect(promise.stream.subscriberBacklog == 1_500)
        let values = promise.stream.values
        for value in 0..<1_600 { promise.success(value) }
        promise.finish()
        var seen: [Int] = []
        for try await value in values { seen.append(value) }
        #expect(seen == Array(100..<1_600))
    }

    @Test("values ends at the first failure, which it throws once; the subscription is cancelled")
    func firstFailureEndsValues() async throws {
        let promise = StreamPromise<Int>()
        let values = promise.stream.values
        promise.success(1)
        promise.success(2)
        promise.failure(TestError(code: 7))
        promise.success(3)
        var iterator = values.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(try await iterator.next() == 2)
        await #expect(throws: TestError(code: 7)) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(promise.stream.subscriberCount == 0)
        #expect(promise.isAbandoned)
    }

    @Test("results carries failures as elements and ends only when the stream finishes")
    func resultsCarryFailures() async {
        let promise = StreamPromise<Int>()
        let results = promise.stream.results
        promise.success(1)
        promise.failure(TestError(code: 2))
        promise.failure(TestError(code: 3))
        promise.success(4)
        let consumer = Task {
            var seen: [String] = []
            for await result in results {
                switch result {
                case .success(let value): seen.append("v\(value)")
                case .failure(let error): seen.append("e\((error as? TestError)?.code ?? -1)")
                }
            }
            return seen
        }
        // Live results after the backlog, then the end.
        promise.failure(TestError(code: 5))
        promise.success(6)
        promise.finish()
        #expect(await consumer.value == ["v1", "e2", "e3", "v4", "e5", "v6"])
    }

    @Test("finish ends the iteration after the buffered values, and it stays ended")
    func finishEnds() async throws {
        let promise = StreamPromise<Int>()
        var iterator = promise.stream.values.makeAsyncIterator()
        promise.success(1)
        promise.finish()
        #expect(try await iterator.next() == 1)
        #expect(try await iterator.next() == nil)
        #expect(try await iterator.next() == nil)
        // A sequence made after the end replays the kept result, then ends.
        var results = promise.stream.results.makeAsyncIterator()
        #expect(try await results.next()?.get() == 1)
        #expect(await results.next() == nil)
    }

    @Test("cancelling a task suspended in next() ends the iteration and abandons the source")
    func cancelWhileSuspended() async throws {
        let promise = StreamPromise<Int>()
        let abandoned = Latch()
        promise.onAbandoned { abandoned.signal() }
        let values = promise.stream.values
        let took = Promise<Void>()
        let consumer = Task {
            var count = 0
            for try await _ in values {
                count += 1
                took.success(())
            }
            return count
        }
        promise.success(1)
        // Took the one value: it is suspended in next() or about to be (cancelled either way).
        try await awaitValue(took.future)
        consumer.cancel()
        #expect(try await consumer.value == 1)
        // Ended by the cancellation itself: `values` is still held here.
        #expect(abandoned.wait())
        #expect(promise.isAbandoned && promise.stream.subscriberCount == 0)
        withExtendedLifetime(values) {}
    }

    @Test("a cancelled task's next() returns nil even with values buffered, and abandons the source")
    func cancelWithBacklog() async throws {
        let promise = StreamPromise<Int>()
        let results = promise.stream.results
        for value in 0..<10 { promise.success(value) }
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = results.makeAsyncIterator()
            let first = await iterator.next()
            return (first, await iterator.next())
        }
        let (first, second) = await consumer.value
        #expect(first == nil && second == nil)
        #expect(promise.isAbandoned && promise.stream.subscriberCount == 0)
        withExtendedLifetime(results) {}
    }

    @Test("dropping the sequence and its iterator before the end abandons the source")
    func droppedIteratorAbandons() async throws {
        let promise = StreamPromise<Int>()
        let abandoned = Latch()
        promise.onAbandoned { abandoned.signal() }
        promise.success(1)
        promise.success(2)
        do {
            var iterator = promise.stream.values.makeAsyncIterator()
            #expect(try await iterator.next() == 1)
            #expect(!promise.isAbandoned)
        }
        #expect(abandoned.wait())
        #expect(promise.isAbandoned)
        // A `break` out of `for await` drops them the same way.
        let second = StreamPromise<Int>()
        second.success(1)
        for await _ in second.stream.results { break }
        #expect(second.isAbandoned)
    }

    @Test("an actor iterates on its own isolation, live values arriving from another thread")
    func iterateOnActor() async throws {
        let promise = StreamPromise<Int>()
        let values = promise.stream.values
        let collector = Collector()
        let collecting = Task { try await collector.collect(values) }
        DispatchQueue.global().async {
            for value in 0..<200 { promise.success(value) }
            promise.finish()
        }
        #expect(try await collecting.value == Array(0..<200))
    }
}
