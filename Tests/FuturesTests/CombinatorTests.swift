import Testing
@testable import Futures

@Suite("Future combinators")
struct CombinatorTests {
    init() { LeakWarnings.quiet() }

    @Test("map transforms the value, passes failures and turns a throw into a failure")
    func map() {
        #expect(Future(value: 2).map(context: .immediate) { $0 * 10 }.result?.successValue == 20)
        let failed = Future<Int>(error: TestError(code: 1)).map(context: .immediate) { $0 + 1 }
        #expect(failed.result?.failureValue as? TestError == TestError(code: 1))
        let thrown = Future(value: 1).map(context: .immediate) { _ -> Int in throw TestError(code: 2) }
        #expect(thrown.result?.failureValue as? TestError == TestError(code: 2))
    }

    @Test("flatMap chains to the inner future's result")
    func flatMap() {
        let inner = Promise<String>()
        let chained = Future(value: 3).flatMap(context: .immediate) { n in inner.future.map(context: .immediate) { "\($0)\(n)" } }
        #expect(chained.result == nil)
        inner.success("x")
        #expect(chained.result?.successValue == "x3")
        let failed = Future<Int>(error: TestError(code: 4)).flatMap(context: .immediate) { Future(value: $0) }
        #expect(failed.result?.failureValue as? TestError == TestError(code: 4))
    }

    @Test("flatMap to a stream forwards the stream's results and finish")
    func flatMapToStream() {
        let source = StreamPromise<Int>()
        source.success(1)
        let stream = Future(value: 10).flatMap(capacity: 5, context: .immediate) { base in
            source.stream.map(context: .immediate) { $0 + base }
        }
        source.success(2)
        source.finish()
        #expect(stream.capacity == 5)
        #expect(stream.keptResults.compactMap(\.successValue) == [11, 12])
        #expect(stream.isFinished)
        let failed = Future<Int>(error: TestError(code: 3)).flatMap(context: .immediate) { _ in source.stream }
        #expect(failed.isFinished)
        #expect(failed.keptResults.first?.failureValue as? TestError == TestError(code: 3))
    }

    @Test("recover replaces a failure with a value and leaves successes alone")
    func recover() {
        #expect(Future<Int>(error: TestError(code: 1)).recover(context: .immediate) { _ in 99 }.result?.successValue == 99)
        #expect(Future(value: 1).recover(context: .immediate) { _ in 99 }.result?.successValue == 1)
    }

    @Test("recoverWith replaces a failure with another future's result")
    func recoverWith() {
        let backup = Promise<Int>()
        let recovered = Future<Int>(error: TestError(code: 1)).recoverWith(context: .immediate) { _ in backup.future }
        #expect(recovered.result == nil)
        backup.success(8)
        #expect(recovered.result?.successValue == 8)
    }

    @Test("withFilter keeps accepted values and fails rejected ones with noSuchElement")
    func withFilter() {
        #expect(Future(value: 4).withFilter(context: .immediate) { $0 % 2 == 0 }.result?.successValue == 4)
        let rejected = Future(value: 3).withFilter(context: .immediate) { $0 % 2 == 0 }
        #expect(rejected.result?.failureValue as? FuturesError == .noSuchElement)
    }

    @Test("forEach sees successful values only")
    func forEach() {
        let seen = Recorder<Int>()
        Future(value: 5).forEach(context: .immediate) { seen.append($0) }
        Future<Int>(error: TestError(code: 0)).forEach(context: .immediate) { seen.append($0) }
        #expect(seen.values == [5])
    }

    @Test("andThen runs the side effect before the returned future completes")
    func andThen() {
        let order = Recorder<String>()
        let promise = Promise<Int>()
        let next = promise.future
            .andThen(context: .immediate) { _ in order.append("first") }
            .andThen(context: .immediate) { _ in order.append("second") }
        next.onSuccess(context: .immediate) { _ in order.append("done") }
        promise.success(1)
        #expect(order.values == ["first", "second", "done"])
        #expect(next.result?.successValue == 1)
    }

    @Test("zip pairs two values and fails with the first failure")
    func zip() {
        let left = Promise<Int>()
        let right = Promise<String>()
        let pair = left.future.zip(right.future)
        right.success("b")
        #expect(pair.result == nil)
        left.success(1)
        #expect(pair.result?.successValue?.0 == 1)
        #expect(pair.result?.successValue?.1 == "b")
        let failed = Future(value: 1).zip(Future<Int>(error: TestError(code: 7)))
        #expect(failed.result?.failureValue as? TestError == TestError(code: 7))
    }

    @Test("zip fails with this future's failure before the other's, whatever order they fail in")
    func zipFailureOrder() {
        let left = Promise<Int>(), right = Promise<Int>()
        let pair = left.future.zip(right.future)
        right.failure(TestError(code: 2))
        #expect(pair.result == nil)
        left.failure(TestError(code: 1))
        #expect(pair.result?.failureValue as? TestError == TestError(code: 1))

        let other = Promise<Int>(), late = Promise<Int>()
        let second = other.future.zip(late.future)
        late.failure(TestError(code: 4))
        other.success(3)
        #expect(second.result?.failureValue as? TestError == TestError(code: 4))
    }

    @Test("fold combines values in sequence order regardless of completion order")
    func fold() {
        let promises = (0..<4).map { _ in Promise<String>() }
        let folded = promises.map(\.future).fold(context: .immediate, initial: "") { $0 + $1 }
        for index in [3, 1, 0, 2] { promises[index].success("\(index)") }
        #expect(folded.result?.successValue == "0123")
        let failing = [Future(value: 1), Future(error: TestError(code: 5))].fold(context: .immediate, initial: 0) { $0 + $1 }
        #expect(failing.result?.failureValue as? TestError == TestError(code: 5))
    }

    @Test("fold fails with the first failure in sequence order, combine's errors included")
    func foldFailureOrder() {
        let promises = (0..<3).map { _ in Promise<Int>() }
        let folded = promises.map(\.future).fold(context: .immediate, initial: 0) { _, value -> Int in
            if value == 0 { throw TestError(code: 10) }
            return value
        }
        promises[2].failure(TestError(code: 12))
        promises[1].failure(TestError(code: 11))
        #expect(folded.result == nil)
        promises[0].success(0)
        #expect(folded.result?.failureValue as? TestError == TestError(code: 10))
    }

    @Test("fold combines one value at a time, in order, when the values arrive on many threads")
    func foldConcurrent() {
        let count = 400
        let promises = (0..<count).map { _ in Promise<Int>() }
        let folded = promises.map(\.future).fold(context: .immediate, initial: [Int]()) { $0 + [$1] }
        onThreads(4) { thread in
            for index in stride(from: thread, to: count, by: 4) { promises[index].success(index) }
        }
        #expect(folded.result?.successValue == Array(0..<count))
    }

    @Test("sequence gathers every value in order, or fails")
    func sequence() {
        let promises = (0..<3).map { _ in Promise<Int>() }
        let all = promises.map(\.future).sequence(context: .immediate)
        promises[2].success(2)
        promises[0].success(0)
        #expect(all.result == nil)
        promises[1].success(1)
        #expect(all.result?.successValue == [0, 1, 2])
        #expect([Future<Int>]().sequence(context: .immediate).result?.successValue == [])
        let failing = [Future(value: 1), Future(error: TestError(code: 6))].sequence(context: .immediate)
        #expect(failing.result?.failureValue as? TestError == TestError(code: 6))
    }

    @Test("traverse maps elements to futures and gathers them")
    func traverse() {
        let all = [1, 2, 3].traverse(context: .immediate) { Future(value: $0 * $0) }
        #expect(all.result?.successValue == [1, 4, 9])
    }

    @Test("future { } runs a throwing closure on the context")
    func syncConstructor() {
        let context = ManualContext()
        let made = future(context: context) { 21 * 2 }
        #expect(made.result == nil)
        context.run()
        #expect(made.result?.successValue == 42)
        let thrown = future(context: .immediate) { () throws -> Int in throw TestError(code: 3) }
        #expect(thrown.result?.failureValue as? TestError == TestError(code: 3))
    }

    @Test("future { } with an async closure completes with its value")
    func asyncConstructor() async throws {
        let made = future { () async throws -> Int in
            await Task.yield()
            return 8
        }
        #expect(try await awaitValue(made) == 8)
    }
}
