import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Futures

/// A live subscriber must not lose results because its context was busy for a moment: the
/// replay capacity of a stream (1 for a "latest state" stream and for everything derived from
/// it) is not how far behind a subscriber may fall.
@Suite("Stream subscribers that fall behind for a moment", .serialized)
struct SubscriberBacklogTests {
    init() { LeakWarnings.quiet() }

    @Test("a capacity-1 stream delivers every value to a subscriber whose queue was busy while they arrived")
    func capacityOneSubscriberBehindByMany() {
        let promise = StreamPromise<Int>(capacity: 1)
        let queue = DispatchQueue(label: "busy subscriber")
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }  // opened on every path out of the test
        let seen = Recorder<Int>()
        let done = Latch()
        queue.async { gate.wait() }  // the queue is busy until the gate opens, however slow the pushes are
        promise.stream.onSuccess(context: QueueContext(queue: queue)) { value in
            seen.append(value)
            if value == 49 { done.signal() }
        }
        for value in 0..<50 { promise.success(value) }
        #expect(promise.stream.pendingDeliveryCounts == [50])
        gate.signal()
        #expect(done.wait())
        #expect(seen.values == Array(0..<50))
        #expect(promise.stream.droppedCount == 0)
        #expect(promise.stream.keptResults.count == 1, "replay stays at the stream's capacity")
    }

    @Test("a chain derived from a capacity-1 stream (flatMap into a notification stream, then map) loses nothing while its queue is busy")
    func derivedChainFromStateStream() {
        // The shape of a BlueCap central: state stream (capacity 1) → flatMap → notifications → map.
        let state = StreamPromise<Int>(capacity: 1)
        let notifications = StreamPromise<Int>(capacity: 100)
        let queue = DispatchQueue(label: "busy chain")
        let context = QueueContext(queue: queue)
        let samples = state.stream
            .flatMap(context: context) { _ in notifications.stream }
            .map(context: context) { $0 * 10 }
        #expect(samples.capacity == 1)
        let seen = Recorder<Int>()
        let done = Latch()
        samples.onSuccess(context: context) { value in
            seen.append(value)
            if value == 290 { done.signal() }
        }
        state.success(1)
        let subscribed = Latch()
        queue.async { subscribed.signal() }
        #expect(subscribed.wait())  // the flatMap has subscribed to the notifications
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }  // opened on every path out of the test
        queue.async { gate.wait() }
        for value in 0..<30 { notifications.success(value) }
        gate.signal()
        #expect(done.wait())
        #expect(seen.values == (0..<30).map { $0 * 10 })
        #expect(samples.droppedCount == 0)
    }

    @Test("a capacity-10 subscriber on a queue keeps every value pushed from another thread while the CPU is loaded")
    func keepsUpUnderLoad() async {
        let (delivered, seen, dropped) = await offPool { Self.underLoad() }
        #expect(delivered)
        #expect(seen == Array(0..<3_000), "\(Set(0..<3_000).subtracting(seen).count) missing")
        #expect(dropped == 0)
    }

    /// Pushes 3,000 values at about 2,000 a second while three threads spin; returns whether
    /// the last one arrived, what arrived and the drop count.
    private static func underLoad() -> (Bool, [Int], Int) {
        let total = 3_000
        let promise = StreamPromise<Int>(capacity: 10)
        let seen = Recorder<Int>()
        let done = Latch()
        promise.stream.onSuccess(context: QueueContext(queue: DispatchQueue(label: "loaded subscriber"))) { value in
            seen.append(value)
            if value == total - 1 { done.signal() }
        }
        let stop = Atomic<Bool>(false)
        let spinners = DispatchGroup()
        for _ in 0..<3 {
            spinners.enter()
            Thread.detachNewThread {
                var x: UInt64 = 1
                while !stop.load(ordering: .relaxed) { x = x &* 6364136223846793005 &+ 1 }
                withExtendedLifetime(x) {}
                spinners.leave()
            }
        }
        // About 2,000 values a second: a rate the subscriber keeps up with on average, while the
        // spinning threads take its queue's worker off the CPU now and then.
        for value in 0..<total {
            promise.success(value)
            if value % 4 == 3 { usleep(2_000) }
        }
        let delivered = done.wait(seconds: 20)
        stop.store(true, ordering: .relaxed)
        _ = spinners.wait(timeout: .now() + 5)
        return (delivered, seen.values, promise.stream.droppedCount)
    }
}
