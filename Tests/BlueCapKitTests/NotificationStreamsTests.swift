// NotificationStreams: who gets which notification — fan-out, no replay, the hand-over across sessions.

import Futures
import Locking
import Testing
@testable import BlueCapKit

@Suite("Notification streams")
struct NotificationStreamsTests {
    typealias Streams = NotificationStreams<Int>

    /// The values a stream delivers to a subscription made now.
    static func values(_ promise: StreamPromise<Int>) -> [Int] {
        let got = Locked<[Int]>([])
        promise.stream.onSuccess(context: .immediate) { v in got.withLock { $0.append(v) } }
        return got.withLock { $0 }
    }

    /// Delivers `values` as the characteristic does: the returned streams get each one.
    static func deliver(_ streams: inout Streams, _ values: [Int]) {
        for v in values { for e in streams.deliver(v) { e.promise.success(v) } }
    }

    @Test("each open stream gets each notification once; a stream opened later gets none of the earlier ones")
    func fanOutWithoutReplay() {
        var streams = Streams()
        let a = streams.open(capacity: 10).promise
        Self.deliver(&streams, [1, 2])
        let b = streams.open(capacity: 10).promise
        Self.deliver(&streams, [3])
        #expect(Self.values(a) == [1, 2, 3])
        #expect(Self.values(b) == [3])
    }

    @Test("capacity is the stream's own: a late first subscription gets its last `capacity` values")
    func capacity() {
        var streams = Streams()
        let a = streams.open(capacity: 2).promise
        Self.deliver(&streams, [1, 2, 3, 4])
        #expect(a.stream.capacity == 2)
        #expect(Self.values(a) == [3, 4])
    }

    @Test("startNotifying with no stream open holds what arrives for the first stream only")
    func handOverToTheFirstStream() {
        var streams = Streams()
        #expect(streams.appStarted().isEmpty)
        #expect(streams.isHolding)
        Self.deliver(&streams, [1, 2])
        let first = streams.open(capacity: 10).promise
        let second = streams.open(capacity: 10).promise
        Self.deliver(&streams, [3])
        #expect(Self.values(first) == [1, 2, 3])
        #expect(Self.values(second) == [3])
        #expect(!streams.isHolding)
    }

    @Test("startNotifying with a stream of this session open holds nothing")
    func noHoldWhileStreaming() {
        var streams = Streams()
        let a = streams.open(capacity: 10).promise
        #expect(streams.appStarted().isEmpty)
        #expect(!streams.isHolding)
        Self.deliver(&streams, [1])
        let b = streams.open(capacity: 10).promise
        #expect(Self.values(a) == [1])
        #expect(Self.values(b) == [])
    }

    @Test("after a drop kept for re-subscription, the app's startNotifying finishes the older streams and their replacements take over, one each")
    func laterSessionReplacesEarlierStreams() {
        var streams = Streams()
        let a1 = streams.open(capacity: 10).promise, b1 = streams.open(capacity: 10).promise
        Self.deliver(&streams, [1])
        #expect(streams.linkLost(keepStreams: true).isEmpty)
        Self.deliver(&streams, [2])  // after the library's own re-subscription: still a1, b1
        let finished = streams.appStarted()
        #expect(finished.count == 2 && finished[0] === a1 && finished[1] === b1)
        Self.deliver(&streams, [3])
        let a2 = streams.open(capacity: 10).promise
        Self.deliver(&streams, [4])
        let b2 = streams.open(capacity: 10).promise
        let c = streams.open(capacity: 10).promise
        Self.deliver(&streams, [5])
        #expect(Self.values(a1) == [1, 2])
        #expect(Self.values(a2) == [3, 4, 5])
        #expect(Self.values(b2) == [3, 4, 5])
        #expect(Self.values(c) == [5])
        #expect(streams.appStarted().isEmpty, "same session: nothing more to finish")
    }

    @Test("a drop without re-subscription removes every stream; held values are dropped; at most heldLimit are held")
    func dropAndLimits() {
        var streams = Streams()
        _ = streams.appStarted()
        Self.deliver(&streams, Array(0..<(Streams.heldLimit + 5)))
        let first = streams.open(capacity: 1_000).promise
        #expect(Self.values(first) == Array(5..<(Streams.heldLimit + 5)))
        #expect(streams.linkLost(keepStreams: false).count == 1)
        #expect(streams.entries.isEmpty)
        _ = streams.appStarted()
        Self.deliver(&streams, [1])
        _ = streams.linkLost(keepStreams: true)
        #expect(!streams.isHolding)
        let id = streams.open(capacity: 10).id
        #expect(streams.remove(id: id) != nil)
        #expect(streams.remove(id: id) == nil)
    }

    @Test("counts: no stream open counts noStream; held values lost with the link count noStream; removed streams keep their backlog drops")
    func counts() {
        var streams = Streams()
        Self.deliver(&streams, [1, 2])  // nobody asked: no stream, no hand-over
        #expect(streams.counts() == NotificationCounts(received: 2, droppedByRule: [.noStream: 2]))
        _ = streams.appStarted()
        Self.deliver(&streams, [3, 4, 5])  // held for the first stream
        #expect(streams.counts().held == 3)
        _ = streams.linkLost(keepStreams: true)  // the hand-over ends: those three are lost
        #expect(streams.counts() == NotificationCounts(received: 5, droppedByRule: [.noStream: 5]))
        let (id, a) = streams.open(capacity: 1)
        let slow = ManualContext()
        a.stream.onSuccess(context: slow) { _ in }
        Self.deliver(&streams, Array(6..<(6 + a.stream.subscriberBacklog + 3)))
        #expect(streams.counts().dropped(by: .subscriberBacklog) == 3)
        #expect(streams.remove(id: id) != nil)
        let after = streams.counts()
        #expect(after.dropped(by: .subscriberBacklog) == 3)
        #expect(after.received == 5 + a.stream.subscriberBacklog + 3)
        #expect(after.delivered == a.stream.subscriberBacklog)
        #expect(after.received == after.delivered + after.dropped + after.held)
    }
}
