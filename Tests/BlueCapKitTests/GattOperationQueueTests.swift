// GattOperationQueue: reads overlap, every other operation runs alone, strict FIFO order.

import Testing
@testable import BlueCapKit
import Locking

@Suite("GATT operation queue")
struct GattOperationQueueTests {
    /// Records which operations started and keeps their `finish` callbacks.
    final class Recorder: Sendable {
        // Sendable through this mutex.
        private let state = Locked<(started: [String], finishes: [String: @Sendable () -> Void])>(([], [:]))

        func start(_ name: String) -> GattOperationQueue.Start {
            { finish in self.state.withLock { $0.started.append(name); $0.finishes[name] = finish } }
        }

        var started: [String] { state.withLock { $0.started } }

        func finish(_ name: String) {
            let f = state.withLock { $0.finishes.removeValue(forKey: name) }
            f?()
        }
    }

    @Test("reads run together; a write waits for them and blocks the reads queued after it")
    func readsOverlapWritesAreExclusive() {
        let queue = GattOperationQueue()
        let r = Recorder()
        queue.enqueue("read1", path: "/c1", access: .shared, start: r.start("read1"), fail: { _ in })
        queue.enqueue("read2", path: "/c2", access: .shared, start: r.start("read2"), fail: { _ in })
        queue.enqueue("write", path: "/c1", start: r.start("write"), fail: { _ in })
        queue.enqueue("read3", path: "/c1", access: .shared, start: r.start("read3"), fail: { _ in })
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
        for i in 0..<3 { queue.enqueue("r\(i)", path: "/c", access: .shared, start: r.start("r\(i)"), fail: { _ in }) }
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
            queue.enqueue(name, path: "/c", access: .shared, start: r.start(name), fail: { e in failed.withLock { $0.append(e.operation) } })
        }
        queue.enqueue("w", path: "/c", start: r.start("w"), fail: { e in failed.withLock { $0.append(e.operation) } })
        queue.failAll { PeripheralError(kind: .notConnected, operation: $0, path: "/c", message: "gone") }
        #expect(failed.withLock { $0 } == ["a", "b", "w"])
        #expect(queue.count == 0)
        r.finish("a")  // a late answer changes nothing
        queue.enqueue("x", path: "/c", start: r.start("x"), fail: { _ in })
        #expect(r.started.last == "x")
    }
}
