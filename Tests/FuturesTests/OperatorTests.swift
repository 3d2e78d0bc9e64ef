import Testing
@testable import Futures

/// Records what a stream delivers: "v1" for a value, "e2" for `TestError(code: 2)`, "end".
func record<T: Sendable>(_ stream: FutureStream<T>, cancelToken: CancelToken? = nil) -> Recorder<String> {
    let recorder = Recorder<String>()
    stream.onComplete(context: .immediate, cancelToken: cancelToken) { result in
        switch result {
        case .success(let value): recorder.append("v\(value)")
        case .failure(let error as TestError): recorder.append("e\(error.code)")
        case .failure(let error): recorder.append("\(error)")
        }
    }
    stream.onFinish(context: .immediate, cancelToken: cancelToken) { recorder.append("end") }
    return recorder
}

@Suite("FutureStream selecting and combining operators")
struct OperatorTests {
    init() { LeakWarnings.quiet() }

    @Test("skip drops the first n results, failures counted, then passes the rest and the end")
    func skip() {
        let context = ManualContext()
        let source = StreamPromise<Int>()
        let seen = record(source.stream.skip(2, context: context))
        source.success(1)
        source.failure(TestError(code: 2))
        source.success(3)
        source.failure(TestError(code: 4))
        source.finish()
        context.run()
        #expect(seen.values == ["v3", "e4", "end"])
    }

    @Test("skip passes abandonment on to its source")
    func skipAbandons() {
        let source = StreamPromise<Int>()
        let token = CancelToken()
        _ = record(source.stream.skip(1, context: .immediate), cancelToken: token)
        token.cancel()
        #expect(source.isAbandoned)
    }

    @Test("merge interleaves both streams' results, failures included, and finishes after both")
    func merge() {
        let context = ManualContext()
        let a = StreamPromise<Int>(), b = StreamPromise<Int>()
        a.success(0)
        let seen = record(a.stream.merge(b.stream, context: context))
        context.run()
        b.success(1)
        context.run()
        a.failure(TestError(code: 2))
        context.run()
        a.finish()
        context.run()
        #expect(seen.values == ["v0", "v1", "e2"])
        b.success(3)
        b.finish()
        context.run()
        #expect(seen.values == ["v0", "v1", "e2", "v3", "end"])
        #expect(record(FutureStream<Int>.merge([])).values == ["end"])
    }

    @Test("abandoning a merge releases every merged stream")
    func mergeAbandons() {
        let a = StreamPromise<Int>(), b = StreamPromise<Int>()
        let token = CancelToken()
        _ = record(FutureStream.merge([a.stream, b.stream], context: .immediate), cancelToken: token)
        token.cancel()
        #expect(a.isAbandoned && b.isAbandoned)
    }

    @Test("concat passes this stream's results, then the other's (its kept ones first), then the other's end")
    func concat() {
        let context = ManualContext()
        let a = StreamPromise<Int>(), b = StreamPromise<Int>()
        let seen = record(a.stream.concat(b.stream, context: context))
        b.success(10)
        a.success(1)
        a.failure(TestError(code: 2))
        context.run()
        #expect(b.stream.subscriberCount == 0)
        a.finish()
        context.run()
        b.success(11)
        b.finish()
        context.run()
        #expect(seen.values == ["v1", "e2", "v10", "v11", "end"])
    }

    @Test("abandoning a concat before the first stream ends never subscribes to the second")
    func concatAbandons() {
        let a = StreamPromise<Int>(), b = StreamPromise<Int>()
        let token = CancelToken()
        _ = record(a.stream.concat(b.stream, context: .immediate), cancelToken: token)
        token.cancel()
        a.finish()
        #expect(b.stream.subscriberCount == 0)
        #expect(a.isAbandoned)
    }

    @Test("retry drops the failed stream, re-subscribes after the delay, and ends with the failure once out of retries")
    func retry() {
        let context = ManualContext()
        let made = Recorder<StreamPromise<Int>>()
        let retried = FutureStream<Int>.retry(times: 1, delay: .seconds(1), context: context) {
            let promise = StreamPromise<Int>()
            made.append(promise)
            return promise.stream
        }
        let seen = record(retried)
        #expect(made.count == 1)
        made.values[0].success(1)
        made.values[0].failure(TestError(code: 2))
        context.run()
        #expect(made.values[0].isAbandoned)
        context.advance(by: .milliseconds(999))
        #expect(made.count == 1)
        context.advance(by: .milliseconds(1))
        #expect(made.count == 2)
        made.values[1].success(3)
        made.values[1].failure(TestError(code: 4))
        context.run()
        #expect(seen.values == ["v1", "v3", "e4", "end"])
        #expect(made.values[1].isAbandoned)
    }

    @Test("retry passes failures `when` rejects, finishes with the stream, and abandonment cancels a pending retry")
    func retryEdges() {
        let context = ManualContext()
        let made = Recorder<StreamPromise<Int>>()
        let retried = FutureStream<Int>.retry(times: 3, delay: 2.0, context: context, when: { ($0 as? TestError)?.code == 9 }) {
            let promise = StreamPromise<Int>()
            made.append(promise)
            return promise.stream
        }
        let token = CancelToken()
        let seen = record(retried, cancelToken: token)
        made.values[0].failure(TestError(code: 1))
        made.values[0].failure(TestError(code: 9))
        context.run()
        #expect(seen.values == ["e1"])
        #expect(context.pendingCount == 1)
        token.cancel()
        #expect(context.pendingCount == 0)
        context.advance(by: .seconds(5))
        #expect(made.count == 1)

        let finishing = FutureStream<Int>.retry(times: 1, context: .immediate) {
            let promise = StreamPromise<Int>()
            promise.success(5)
            promise.finish()
            return promise.stream
        }
        #expect(record(finishing).values == ["v5", "end"])
    }

    @Test("distinctUntilChanged drops repeats of the previous value; a failure starts over")
    func distinctUntilChanged() {
        let source = StreamPromise<Int>()
        let seen = record(source.stream.distinctUntilChanged(context: .immediate))
        for value in [1, 1, 2, 2] { source.success(value) }
        source.failure(TestError(code: 7))
        for value in [2, 1, 1] { source.success(value) }
        source.finish()
        #expect(seen.values == ["v1", "v2", "e7", "v2", "v1", "end"])
    }

    @Test("distinct drops values seen before, remembering a bounded number of them")
    func distinct() {
        let source = StreamPromise<Int>()
        let seen = record(source.stream.distinct(remembering: 2, context: .immediate))
        for value in [1, 2, 1, 3, 2, 1] { source.success(value) }
        source.finish()
        // After 3, only {2, 3} are remembered: 1 is new again.
        #expect(seen.values == ["v1", "v2", "v3", "v1", "end"])
    }
}
