import Dispatch
import Testing
@testable import Futures

@Suite("FutureStream")
struct StreamTests {
    init() { LeakWarnings.quiet() }

    @Test("the default capacity is 100 and the overflow policy drops the oldest kept result")
    func defaultCapacity() {
        let promise = StreamPromise<Int>()
        #expect(promise.stream.capacity == 100)
        for value in 0..<150 { promise.success(value) }
        #expect(promise.stream.keptCount == 100)
        #expect(promise.stream.keptResults.compactMap(\.successValue) == Array(50..<150))
    }

    @Test("a new subscriber gets the kept results, then live ones, in order")
    func replayThenLive() {
        let promise = StreamPromise<Int>(capacity: 3)
        for value in 1...5 { promise.success(value) }
        let seen = Recorder<Int>()
        promise.stream.onSuccess(context: .immediate) { seen.append($0) }
        #expect(seen.values == [3, 4, 5])
        promise.success(6)
        #expect(seen.values == [3, 4, 5, 6])
    }

    @Test("failures are ordinary elements; onFailure sees them")
    func failureElements() {
        let promise = StreamPromise<Int>()
        let errors = Recorder<Int>()
        let values = Recorder<Int>()
        promise.stream.onFailure(context: .immediate) { errors.append(($0 as! TestError).code) }
        promise.stream.onSuccess(context: .immediate) { values.append($0) }
        promise.success(1)
        promise.failure(TestError(code: 2))
        promise.success(3)
        #expect(errors.values == [2])
        #expect(values.values == [1, 3])
    }

    @Test("finish ends the stream: later pushes are refused and late subscribers get the kept results and the end")
    func finish() {
        let promise = StreamPromise<Int>()
        let finished = AtomicCount()
        promise.stream.onFinish(context: .immediate) { finished.increment() }
        promise.success(1)
        #expect(promise.finish())
        #expect(!promise.finish())
        #expect(!promise.success(2))
        #expect(finished.current == 1)
        let late = Recorder<String>()
        promise.stream.onComplete(context: .immediate) { late.append("item\(try! $0.get())") }
        promise.stream.onFinish(context: .immediate) { late.append("end") }
        #expect(late.values == ["item1", "end"])
        #expect(promise.stream.subscriberCount == 0)
    }

    @Test("finish(throwing:) pushes the error as the last result")
    func finishThrowing() {
        let promise = StreamPromise<Int>()
        promise.finish(throwing: TestError(code: 8))
        #expect(promise.stream.isFinished)
        #expect(promise.stream.keptResults.last?.failureValue as? TestError == TestError(code: 8))
    }

    @Test("a blocked subscriber of a capacity-10 stream keeps at most 1,000 (the minimum backlog) waiting, then gets the newest, counting drops")
    func slowSubscriberBounded() async {
        await offPool { Self.slowSubscriber() }
    }

    private static func slowSubscriber() {
        let promise = StreamPromise<Int>(capacity: 10)
        let context = QueueContext(queue: DispatchQueue(label: "slow subscriber"))
        let started = Latch()
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }  // opened on every path out of the test (a second signal is harmless)
        let last = Latch()
        let seen = Recorder<Int>()
        promise.stream.onSuccess(context: context) { value in
            seen.append(value)
            if value == 0 {
                started.signal()
                gate.wait()  // blocked until the test opens the gate, however slow the pushes are
            }
            if value == 9_999 { last.signal() }
        }
        promise.success(0)
        #expect(started.wait())
        var maxPending = 0
        for value in 1..<10_000 {
            promise.success(value)  // must never block on the stalled subscriber
            maxPending = max(maxPending, promise.stream.pendingDeliveryCounts.max() ?? 0)
        }
        #expect(promise.stream.subscriberBacklog == 1_000)
        #expect(maxPending == 1_000)
        #expect(promise.stream.droppedCount == 10_000 - 1 - 1_000)
        gate.signal()
        #expect(last.wait())
        #expect(seen.values == [0] + Array(9_000..<10_000))
        #expect(promise.stream.pendingDeliveryCounts == [0])
    }

    @Test("the backlog of a subscription is the stream's capacity, but never less than 1,000")
    func subscriberBacklogBound() {
        #expect(StreamPromise<Int>(capacity: 1).stream.subscriberBacklog == 1_000)
        #expect(StreamPromise<Int>(capacity: 1_000).stream.subscriberBacklog == 1_000)
        #expect(StreamPromise<Int>(capacity: 5_000).stream.subscriberBacklog == 5_000)
        #expect(FutureStream<Int>.minimumSubscriberBacklog == 1_000)
    }

    @Test("subscribers that keep up drop nothing")
    func fastSubscriberDropsNothing() {
        let promise = StreamPromise<Int>(capacity: 2)
        let seen = Recorder<Int>()
        promise.stream.onSuccess(context: .immediate) { seen.append($0) }
        for value in 0..<100 { promise.success(value) }
        #expect(seen.count == 100)
        #expect(promise.stream.droppedCount == 0)
    }

    @Test("a slow subscriber still gets the end of the stream after its newest results")
    func slowSubscriberGetsFinish() {
        let promise = StreamPromise<Int>(capacity: 3)
        let context = ManualContext()
        let seen = Recorder<String>()
        promise.stream.onComplete(context: context) { seen.append("\(try! $0.get())") }
        promise.stream.onFinish(context: context) { seen.append("end") }
        for value in 0..<1_010 { promise.success(value) }
        promise.finish()
        #expect(promise.stream.pendingDeliveryCounts.isEmpty)  // finished: no live subscribers
        context.run()
        #expect(seen.values == (10..<1_010).map { "\($0)" } + ["end"])
        #expect(promise.stream.droppedCount == 2 * 10)
    }

    @Test("a cancelled subscription receives nothing more, even deliveries already queued")
    func cancelSubscription() {
        let context = ManualContext()
        let promise = StreamPromise<Int>()
        let token = CancelToken()
        let seen = Recorder<Int>()
        promise.stream.onSuccess(context: context, cancelToken: token) { seen.append($0) }
        promise.success(1)
        context.run()
        promise.success(2)
        #expect(token.cancel())
        promise.success(3)
        context.run()
        #expect(seen.values == [1])
        #expect(promise.stream.subscriberCount == 0)
        #expect(!token.cancel())
    }

    @Test("callbacks on a queue context run in stream order")
    func queueOrder() {
        let promise = StreamPromise<Int>(capacity: 1000)
        let seen = Recorder<Int>()
        let latch = Latch()
        promise.stream.onSuccess(context: QueueContext.global) { value in
            seen.append(value)
            if value == 999 { latch.signal() }
        }
        for value in 0..<1000 { promise.success(value) }
        #expect(latch.wait())
        #expect(seen.values == Array(0..<1000))
    }

    // MARK: Combinators

    @Test("map transforms values, passes failures and finishes with the source")
    func map() {
        let promise = StreamPromise<Int>()
        promise.success(1)
        let mapped = promise.stream.map(context: .immediate) { value -> String in
            if value == 3 { throw TestError(code: 3) }
            return "v\(value)"
        }
        promise.success(2)
        promise.success(3)
        promise.failure(TestError(code: 4))
        promise.finish()
        let kept = mapped.keptResults
        #expect(kept.compactMap(\.successValue) == ["v1", "v2"])
        #expect(kept.compactMap { $0.failureValue as? TestError } == [TestError(code: 3), TestError(code: 4)])
        #expect(mapped.isFinished)
        #expect(mapped.capacity == promise.stream.capacity)
    }

    @Test("flatMap to futures emits results as they complete and finishes after the last")
    func flatMapFuture() {
        let promise = StreamPromise<Int>()
        let inner = (0..<2).map { _ in Promise<Int>() }
        let flat = promise.stream.flatMap(capacity: 7, context: .immediate) { inner[$0].future }
        promise.success(0)
        promise.success(1)
        promise.finish()
        #expect(!flat.isFinished)
        inner[1].success(10)
        inner[0].success(20)
        #expect(flat.keptResults.compactMap(\.successValue) == [10, 20])
        #expect(flat.isFinished)
        #expect(flat.capacity == 7)
    }

    @Test("flatMap to streams merges them and finishes when all have finished")
    func flatMapStream() {
        let outer = StreamPromise<Int>()
        let inners = (0..<2).map { _ in StreamPromise<Int>() }
        let merged = outer.stream.flatMap(context: .immediate) { inners[$0].stream }
        outer.success(0)
        outer.success(1)
        inners[0].success(1)
        inners[1].success(2)
        inners[0].success(3)
        outer.finish()
        inners[0].finish()
        #expect(!merged.isFinished)
        inners[1].finish()
        #expect(merged.keptResults.compactMap(\.successValue) == [1, 2, 3])
        #expect(merged.isFinished)
    }

    @Test("recover and recoverWith replace failed results")
    func recover() {
        let promise = StreamPromise<Int>()
        let recovered = promise.stream.recover(context: .immediate) { ($0 as! TestError).code * 100 }
        let backup = Promise<Int>()
        let recoveredWith = promise.stream.recoverWith(context: .immediate) { _ in backup.future }
        promise.success(1)
        promise.failure(TestError(code: 2))
        promise.finish()
        #expect(recovered.keptResults.compactMap(\.successValue) == [1, 200])
        #expect(!recoveredWith.isFinished)
        backup.success(5)
        #expect(recoveredWith.keptResults.compactMap(\.successValue) == [1, 5])
        #expect(recoveredWith.isFinished)
    }

    @Test("withFilter keeps accepted values; forEach sees every value")
    func filterAndForEach() {
        let promise = StreamPromise<Int>()
        let even = promise.stream.withFilter(context: .immediate) { $0 % 2 == 0 }
        let seen = Recorder<Int>()
        promise.stream.forEach(context: .immediate) { seen.append($0) }
        for value in 1...6 { promise.success(value) }
        #expect(even.keptResults.compactMap(\.successValue) == [2, 4, 6])
        #expect(seen.values == [1, 2, 3, 4, 5, 6])
    }

    @Test("take(n) delivers n results, finishes and unsubscribes")
    func take() {
        let promise = StreamPromise<Int>()
        promise.success(1)
        let taken = promise.stream.take(3)
        #expect(promise.stream.subscriberCount == 1)
        for value in 2...5 { promise.success(value) }
        #expect(taken.keptResults.compactMap(\.successValue) == [1, 2, 3])
        #expect(taken.isFinished)
        #expect(promise.stream.subscriberCount == 0)
        #expect(promise.stream.take(0).isFinished)
    }

    @Test("first completes with the first result, or noSuchElement for an empty finished stream")
    func first() {
        let promise = StreamPromise<Int>()
        let first = promise.stream.first()
        #expect(first.result == nil)
        promise.success(4)
        promise.success(5)
        #expect(first.result?.successValue == 4)
        #expect(promise.stream.first().result?.successValue == 4)
        let empty = StreamPromise<Int>()
        empty.finish()
        #expect(empty.stream.first().result?.failureValue as? FuturesError == .noSuchElement)
    }

    @Test("completeWith(future:) pushes the future's result")
    func completeWithFuture() {
        let promise = StreamPromise<Int>()
        promise.completeWith(future: Future(value: 9))
        #expect(promise.stream.keptResults.compactMap(\.successValue) == [9])
    }

    // MARK: AsyncSequence

    @Test("values yields kept then live values and ends when the stream finishes")
    func values() async throws {
        let promise = StreamPromise<Int>()
        promise.success(1)
        let values = promise.stream.values
        promise.success(2)
        promise.success(3)
        promise.finish()
        var collected: [Int] = []
        for try await value in values { collected.append(value) }
        #expect(collected == [1, 2, 3])
    }

    @Test("values throws at a failed result")
    func valuesFailure() async {
        let promise = StreamPromise<Int>()
        promise.success(1)
        promise.failure(TestError(code: 6))
        await #expect(throws: TestError(code: 6)) {
            for try await _ in promise.stream.values {}
        }
    }

    @Test("values buffers at most the subscriber backlog (1,000 for capacity 3): a slow consumer loses the oldest")
    func valuesBounded() async throws {
        let promise = StreamPromise<Int>(capacity: 3)
        let values = promise.stream.values
        for value in 1...1_010 { promise.success(value) }
        promise.finish()
        var collected: [Int] = []
        for try await value in values { collected.append(value) }
        #expect(collected == Array(11...1_010))
    }

    @Test("ending the iteration early unsubscribes from the stream")
    func valuesUnsubscribe() async throws {
        let promise = StreamPromise<Int>()
        for value in 1...3 { promise.success(value) }
        for try await value in promise.stream.values where value == 2 { break }
        #expect(promise.stream.subscriberCount == 0)
    }
}
