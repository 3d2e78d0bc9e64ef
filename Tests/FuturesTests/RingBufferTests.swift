// RingBufferTests: the FIFO behind kept results, subscriber queues and async iteration.
import Testing
@testable import Futures

@Suite("RingBuffer")
struct RingBufferTests {
    @Test("growing a wrapped buffer keeps the elements oldest first and moves them out of the old storage")
    func growWrapped() {
        var buffer = RingBuffer<[Int]>(initialCapacity: 4)
        for value in 0..<4 { buffer.append([value]) }
        #expect(buffer.popFirst() == [0] && buffer.popFirst() == [1])
        // Wraps around the end of the storage, then grows twice.
        for value in 4..<12 { buffer.append([value]) }
        #expect(buffer.storage.count == 16)
        #expect(buffer.elements == (2..<12).map { [$0] })
        #expect(buffer.storage.compactMap { $0 }.count == 10)
        #expect(buffer.removeAll() == (2..<12).map { [$0] } && buffer.isEmpty)
    }

    @Test("appending beyond a limit drops the oldest")
    func dropsOldest() {
        var buffer = RingBuffer<Int>()
        var dropped = 0
        for value in 0..<10 where buffer.append(value, droppingOldestBeyond: 3) { dropped += 1 }
        #expect(buffer.elements == [7, 8, 9] && dropped == 7)
    }
}
