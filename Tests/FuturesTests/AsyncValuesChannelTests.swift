// AsyncValuesChannelTests: the buffer behind FutureStream.values and .results, and WakeBatch.
import Dispatch
import Locking
import Testing
@testable import Futures

@Suite("Async iteration channel")
struct AsyncValuesChannelTests {
    init() { LeakWarnings.quiet() }

    @Test("values pushed in wake batches from another thread reach a waiting consumer complete and in order")
    func batchedPushes() async throws {
        let promise = StreamPromise<Int>()
        let values = promise.stream.values
        let consumer = Task {
            var out: [Int] = []
            for try await value in values { out.append(value) }
            return out
        }
        DispatchQueue.global().async {
            for chunk in 0..<10 {
                WakeBatch.run { for i in 0..<100 { promise.success(chunk * 100 + i) } }
            }
            promise.finish()
        }
        #expect(try await consumer.value == Array(0..<1_000))
    }

    @Test("a wake inside a batch waits for the batch's end; outside a batch it happens at once")
    func wakeBatchDefers() async {
        // A task parked on a continuation, handed over without blocking a pool thread.
        let woken = Locked<Task<Void, Never>?>(nil)
        let continuation = await withCheckedContinuation { (ready: CheckedContinuation<UnsafeContinuation<Void, Never>, Never>) in
            woken.withLock { task in
                task = Task { await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in ready.resume(returning: c) } }
            }
        }
        let (pendingInside, pendingAfter) = WakeBatch.run { () -> (Int, Int) in
            WakeBatch.resume(continuation)
            return (WakeBatchState.current.pending.count, -1)
        }
        #expect(pendingInside == 1 && pendingAfter == -1)
        #expect(WakeBatchState.current.pending.isEmpty && !WakeBatchState.current.isOpen)
        await woken.withLock { $0 }?.value

        // Outside a batch: resumed at once, nothing deferred.
        let second = Task {
            await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in WakeBatch.resume(c) }
        }
        await second.value
        #expect(WakeBatchState.current.pending.isEmpty)
    }

    @Test("cancelling the consuming task ends the iteration and abandons the stream")
    func cancelWhileWaiting() async throws {
        let promise = StreamPromise<Int>()
        let abandoned = Latch()
        promise.onAbandoned { abandoned.signal() }
        let values = promise.stream.values
        let consumer = Task {
            var count = 0
            for try await _ in values { count += 1 }
            return count
        }
        consumer.cancel()
        _ = try await consumer.value
        #expect(abandoned.wait())
    }

    @Test("results over the channel keep failures as elements and drop the oldest beyond the backlog")
    func resultsBounded() async {
        let promise = StreamPromise<Int>(capacity: 3)
        let results = promise.stream.results
        for value in 1...1_005 { promise.success(value) }
        promise.failure(TestError(code: 9))
        promise.finish()
        var seen: [Int] = []
        var failures = 0
        for await result in results {
            switch result {
            case .success(let value): seen.append(value)
            case .failure: failures += 1
            }
        }
        // 1,006 results into a backlog of 1,000: the six oldest are gone.
        #expect(seen == Array(7...1_005) && failures == 1)
    }
}
