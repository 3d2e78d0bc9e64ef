import Dispatch
import Synchronization
import Testing
@testable import Futures

/// One promise's hit counter: each (promise, thread) callback adds its own byte.
private final class Slot: Sendable {
    let hits = Atomic<Int>(0)
}

@Suite("Stress and scale", .serialized)
struct StressTests {
    init() { LeakWarnings.quiet() }

    @Test("8 threads completing and subscribing 100,000 promises (a tenth under a sanitizer) run each callback exactly once")
    func concurrentCompleteAndSubscribe() async {
        await offPool { Self.completeAndSubscribe() }
    }

    private static func completeAndSubscribe() {
        let count = stressRounds(100_000)
        let threads = 8
        let promises = (0..<count).map { _ in Promise<Int>() }
        let slots = (0..<count).map { _ in Slot() }
        let wins = AtomicCount()
        onThreads(threads) { thread in
            for index in 0..<count {
                let slot = slots[index]
                let promise = promises[index]
                if index % threads == thread, !promise.success(index) { wins.increment() }
                promise.future.onComplete(context: .immediate) { result in
                    precondition(result.successValue == index)
                    slot.hits.wrappingAdd(1 << (thread * 4), ordering: .relaxed)
                }
                if index % threads == thread { wins.increment(by: promise.complete(.success(-1)) ? 1 : 0) }
            }
        }
        let expected = (0..<threads).reduce(0) { $0 | (1 << ($1 * 4)) }
        #expect(slots.allSatisfy { $0.hits.load(ordering: .relaxed) == expected })
        #expect(wins.current == 0)  // a second completion is always refused
        #expect(promises.allSatisfy { $0.future.result?.successValue != -1 })
        #expect(promises.allSatisfy { $0.future.waitingCallbackCount == 0 })
    }

    @Test("concurrent completers race: exactly one wins each promise")
    func racingCompleters() async {
        await offPool { Self.race() }
    }

    private static func race() {
        let count = 20_000
        let promises = (0..<count).map { _ in Promise<Int>() }
        let wins = AtomicCount()
        let runs = AtomicCount()
        for promise in promises { promise.future.onComplete(context: .immediate) { _ in runs.increment() } }
        onThreads(8) { thread in
            for promise in promises where promise.success(thread) { wins.increment() }
        }
        #expect(wins.current == count)
        #expect(runs.current == count)
    }

    @Test("a 100,000-link flatMap chain completed at the end does not overflow the stack")
    func longFlatMapChain() async {
        await offPool {
            let head = Promise<Int>()
            var tail = head.future
            for _ in 0..<100_000 {
                tail = tail.flatMap(context: .immediate) { Future(value: $0 + 1) }
            }
            head.success(0)
            #expect(tail.result?.successValue == 100_000)
        }
    }

    @Test("a 100,000-link chain of pending inner futures completed from the far end runs iteratively")
    func longPendingChain() async {
        await offPool {
            let promises = (0..<100_000).map { _ in Promise<Int>() }
            for index in 0..<(promises.count - 1) {
                promises[index].completeWith(future: promises[index + 1].future)
            }
            promises[promises.count - 1].success(5)
            #expect(promises[0].future.result?.successValue == 5)
        }
    }

    @Test("a 100,000-link map chain of immediate callbacks does not overflow the stack")
    func longMapChain() async {
        await offPool {
            let head = Promise<Int>()
            var tail = head.future
            for _ in 0..<100_000 { tail = tail.map(context: .immediate) { $0 + 1 } }
            head.success(1)
            #expect(tail.result?.successValue == 100_001)
        }
    }

    @Test("releasing a 100,000-link never-completed chain frees every link without overflowing the stack")
    func releaseLongPendingChain() async {
        // On a 512 KiB stack: a recursive teardown of this chain would need tens of megabytes.
        let freed = await offPool { () -> Bool in
            weak var weakHead: Future<Int>?
            weak var weakTail: Future<Int>?
            do {
                let head = Promise<Int>()
                var tail = head.future
                for index in 0..<100_000 {
                    tail = index.isMultiple(of: 2)
                        ? tail.map(context: .immediate) { $0 + 1 }
                        : tail.flatMap(context: .immediate) { Future(value: $0 + 1) }
                }
                weakHead = head.future
                weakTail = tail
                #expect(weakTail?.isCompleted == false)
            }
            return weakHead == nil && weakTail == nil
        }
        #expect(freed)
    }

    @Test("1,000,000 values through a capacity-10 stream keep at most 10; a late subscriber gets the last 10")
    func boundedStreamMemory() async {
        await offPool { Self.pushMillion() }
    }

    private static func pushMillion() {
        let promise = StreamPromise<Int>(capacity: 10)
        var maxKept = 0
        for value in 0..<1_000_000 {
            promise.success(value)
            maxKept = max(maxKept, promise.stream.keptCount)
        }
        #expect(maxKept == 10)
        #expect(promise.stream.keptCount == 10)
        let late = Recorder<Int>()
        promise.stream.onSuccess(context: .immediate) { late.append($0) }
        #expect(late.values == Array(999_990..<1_000_000))
    }

    @Test("a stream pushed from 8 threads, with capacity for the whole backlog, delivers every value exactly once to each subscriber")
    func concurrentStream() async {
        await offPool { Self.pushConcurrently() }
    }

    private static func pushConcurrently() {
        let total = 8 * 10_000
        // Capacity covers the whole backlog: no subscriber can fall `capacity` results behind.
        let promise = StreamPromise<Int>(capacity: total)
        let sums = (0..<2).map { _ in AtomicCount() }
        let counts = (0..<2).map { _ in AtomicCount() }
        let latch = Latch(2)
        for subscriber in 0..<2 {
            promise.stream.onSuccess(context: subscriber == 0 ? .immediate : .futuresDefault) { value in
                sums[subscriber].increment(by: value)
                if counts[subscriber].increment() == total { latch.signal() }
            }
        }
        onThreads(8) { thread in
            for value in 0..<10_000 { promise.success(thread * 10_000 + value) }
        }
        #expect(latch.wait())
        let expected = (0..<total).reduce(0, +)
        #expect(sums.allSatisfy { $0.current == expected })
        #expect(promise.stream.droppedCount == 0)
    }

    @Test("a capacity-10 stream pushed from 8 threads: each subscriber gets every value it did not drop (at most 1,000 waiting), once, in order")
    func concurrentStreamBounded() async {
        await offPool { Self.pushConcurrentlyBounded() }
    }

    private static func pushConcurrentlyBounded() {
        let promise = StreamPromise<Int>(capacity: 10)
        let seen = (0..<2).map { _ in Recorder<Int>() }
        let finished = Latch(2)
        for subscriber in 0..<2 {
            promise.stream.subscribe(
                context: subscriber == 0 ? .immediate : .futuresDefault, token: nil
            ) { event in
                switch event {
                case .item(let result): seen[subscriber].append(result.successValue ?? -1)
                case .finished: finished.signal()
                }
            }
        }
        onThreads(8) { thread in
            for value in 0..<10_000 { promise.success(thread * 10_000 + value) }
        }
        promise.finish()
        #expect(finished.wait())
        let delivered = seen.map(\.values)
        #expect(delivered[0].count + delivered[1].count + promise.stream.droppedCount == 2 * 80_000)
        for values in delivered {
            #expect(Set(values).count == values.count)  // nothing twice
            // Stream order is push order, so each pushing thread's values arrive increasing.
            let byThread = Dictionary(grouping: values) { $0 / 10_000 }
            #expect(byThread.values.allSatisfy { $0 == $0.sorted() })
        }
        #expect(promise.stream.keptCount == 10)
    }
}
