// GattOperationQueue: reads overlap, every other operation runs alone, strict FIFO order.

import Futures
import Testing
@testable import BlueCapKit
import Locking
import Timing

@Suite("GATT operation queue")
struct GattOperationQueueTests {
    /// Records which operations started and keeps their running operations, to end them later.
    final class Recorder: Sendable {
        // Sendable through this mutex.
        private let state = Locked<(started: [String], running: [String: GattOperation<Void>])>(([], [:]))

        func start(_ name: String) -> @Sendable (GattOperation<Void>) -> Void {
            { op in self.state.withLock { $0.started.append(name); $0.running[name] = op } }
        }

        var started: [String] { state.withLock { $0.started } }

        func finish(_ name: String) {
            let op = state.withLock { $0.running.removeValue(forKey: name) }
            op?.succeed(())
        }
    }

    @Test("reads run together; a write waits for them and blocks the reads queued after it")
    func readsOverlapWritesAreExclusive() {
        let queue = GattOperationQueue()
        let r = Recorder()
        queue.enqueue("read1", path: "/c1", access: .shared, promise: Promise<Void>(), start: r.start("read1"))
        queue.enqueue("read2", path: "/c2", access: .shared, promise: Promise<Void>(), start: r.start("read2"))
        queue.enqueue("write", path: "/c1", promise: Promise<Void>(), start: r.start("write"))
        queue.enqueue("read3", path: "/c1", access: .shared, promise: Promise<Void>(), start: r.start("read3"))
        #expect(r.started == ["read1", "read2"])
        r.finish("read1")
        #expect(r.started == ["read1", "read2"])
        r.finish("read2")
        #expect(r.started == ["read1", "read2", "write"])
        r.finish("write")
        #expect(r.started == ["read1", "read2", "write", "read3"])
        r.finish("read3")
        #expect(queue.count == 0)
    }

    @Test("no more than maxConcurrentReads reads are in flight; the next starts when one finishes")
    func readConcurrencyIsBounded() {
        let queue = GattOperationQueue(limit: 16, maxConcurrentReads: 2)
        let r = Recorder()
        for i in 0..<3 { queue.enqueue("r\(i)", path: "/c", access: .shared, promise: Promise<Void>(), start: r.start("r\(i)")) }
        #expect(r.started == ["r0", "r1"])
        r.finish("r1")
        #expect(r.started == ["r0", "r1", "r2"])
    }

    @Test("failAll fails running and waiting operations; the queue accepts work again after")
    func failAllEmptiesTheQueue() {
        let queue = GattOperationQueue()
        let r = Recorder()
        let failed = Locked<[String]>([])
        for name in ["a", "b"] {
            queue.enqueue(name, path: "/c", access: .shared, promise: recording(name, into: failed), start: r.start(name))
        }
        queue.enqueue("w", path: "/c", promise: recording("w", into: failed), start: r.start("w"))
        queue.failAll { PeripheralError(kind: .notConnected, operation: $0, path: "/c", message: "gone") }
        #expect(failed.withLock { $0 } == ["a", "b", "w"])
        #expect(queue.count == 0)
        r.finish("a")  // a late answer changes nothing
        queue.enqueue("x", path: "/c", promise: Promise<Void>(), start: r.start("x"))
        #expect(r.started.last == "x")
    }
    /// A promise whose failure appends the failed operation's name to `failed`.
    func recording(_ name: String, into failed: Locked<[String]>) -> Promise<Void> {
        let promise = Promise<Void>()
        promise.future.onFailure(context: .immediate) { e in failed.withLock { $0.append((e as? PeripheralError)?.operation ?? "?") } }
        return promise
    }

    @Test("an operation's answer completes its caller's promise before the next operation starts")
    func answerCompletesBeforeNextStarts() {
        let queue = GattOperationQueue()
        let order = Locked<[String]>([])
        for name in ["a", "b"] {
            let promise = Promise<Void>()
            promise.future.onSuccess(context: .immediate) { order.withLock { $0.append("\(name) answered") } }
            queue.enqueue(name, path: "/c", promise: promise) { op in
                order.withLock { $0.append("\(name) started") }
                op.succeed(())
            }
        }
        #expect(order.withLock { $0 } == ["a started", "a answered", "b started", "b answered"])
        #expect(queue.count == 0)
    }

    @Test("a deadline fails the caller with .timeout, undoes the start's claim, and lets the next start; the late answer changes nothing")
    func deadlineEndsTheOperation() throws {
        let clock = ManualClock()
        let queue = GattOperationQueue(clock: clock)
        let r = Recorder()
        let first = Promise<Void>()
        let undone = Locked<[Int]>([])
        queue.enqueue("slow", path: "/c", timeout: .seconds(5), promise: first, onFailure: { id in undone.withLock { $0.append(id) } },
                      start: r.start("slow"))
        queue.enqueue("next", path: "/c", promise: Promise<Void>(), start: r.start("next"))
        #expect(r.started == ["slow"])
        _ = clock.advance(by: .seconds(5))
        let error = try #require(failureOf(first))
        #expect((error as? PeripheralError)?.kind == .timeout, "\(error)")
        #expect(undone.withLock { $0.count } == 1)
        #expect(r.started == ["slow", "next"])
        r.finish("slow")  // the late answer: the promise stays failed, the running "next" is not ended
        #expect((failureOf(first) as? PeripheralError)?.kind == .timeout)
        #expect(queue.count == 1)
        r.finish("next")
        #expect(queue.count == 0)
    }

    @Test("a full queue fails the caller's promise with .busy at once, without running it")
    func fullQueueFailsWithBusy() {
        let queue = GattOperationQueue(limit: 1)
        let r = Recorder()
        queue.enqueue("a", path: "/c", promise: Promise<Void>(), start: r.start("a"))
        let rejected = Promise<Void>()
        queue.enqueue("b", path: "/c", promise: rejected, start: r.start("b"))
        #expect((failureOf(rejected) as? PeripheralError)?.kind == .busy)
        r.finish("a")
        #expect(r.started == ["a"])
    }

    /// The error `promise` failed with (nil while pending or after a success).
    func failureOf(_ promise: Promise<Void>) -> (any Error)? {
        if case .failure(let e)? = promise.future.result { return e }
        return nil
    }
}
