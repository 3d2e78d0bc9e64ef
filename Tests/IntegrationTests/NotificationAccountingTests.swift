// Characteristic.notificationCounts through the public API: a slow subscriber loses what its
// backlog cannot hold, notifications before any stream are held up to the limit, and the counts
// say exactly which and by which rule.
import BlueCapKit
import BlueZSimulator
import Dispatch
import Foundation
import Testing
import TestSupport

@Suite("Notification accounting", .serialized, .timeLimit(.minutes(2)))
struct NotificationAccountingTests {
    let tag = "C0:FF:EE:00:00:01"

    /// Notification `i`: 2 bytes, little-endian.
    private static func value(_ i: Int) -> Data { Data([UInt8(i & 0xFF), UInt8(i >> 8)]) }
    private static func number(_ d: Data?) -> Int { d.map { Int($0[0]) | Int($0[1]) << 8 } ?? -1 }

    @Test("a subscriber blocked in its callback loses what its backlog cannot hold: dropped by subscriberBacklog, received = delivered + dropped")
    func testSlowSubscriber_WhenBacklogOverflows_CountsDropsByRule() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        _ = try await data.startNotifying().value
        let stream = data.receiveNotificationUpdates(capacity: 1)
        let backlog = stream.subscriberBacklog  // max(capacity, 1,000): capacity 1 is only the replay
        let total = backlog + 50
        let gate = DispatchSemaphore(value: 0)
        let blocked = Collector<Int>()
        let consumed = Collector<Int>()
        stream.onSuccess(context: QueueContext(queue: DispatchQueue(label: "slow-subscriber"))) { update in
            let n = Self.number(update.data)
            consumed.append(n)
            if n == 0 {
                blocked.append(n)
                gate.wait()  // the slow part: released by the test once everything has arrived
            }
        }
        h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Self.value(0))
        try await blocked.wait(for: 1)
        // A burst waits for room in the notification socket: the simulator loses none.
        let sent = await h.simulator.burst(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, count: total - 1) {
            [UInt8](Self.value($0 + 1))
        }
        #expect(sent.delivered == total - 1)
        try await waitUntil("all \(total) received", timeout: .seconds(30)) { data.notificationCounts.received == total }
        // 1 in the callback, `backlog` waiting, the oldest of the others dropped one by one.
        let whileBlocked = data.notificationCounts
        #expect(whileBlocked.dropped(by: .subscriberBacklog) == total - 1 - backlog)
        #expect(whileBlocked.droppedByRule.keys.sorted { $0.rawValue < $1.rawValue } == [.subscriberBacklog])
        gate.signal()
        let got = try await consumed.wait(for: 1 + backlog)
        // The ones it got: 0, then the newest `backlog`; the ones missing are the counted drops.
        #expect(got == [0] + Array((total - backlog)..<total))
        let missing = Set(0..<total).subtracting(got)
        let counts = data.notificationCounts
        #expect(counts.received == total)
        #expect(counts.delivered == got.count)
        #expect(counts.dropped == missing.count)
        #expect(counts.dropped(by: .subscriberBacklog) == missing.count)
        #expect(counts.received == counts.delivered + counts.dropped)
        #expect(counts.held == 0)
        #expect(counts.description.contains("subscriberBacklog \(missing.count)"))
    }

    @Test("notifications before the first stream are held up to 100: the oldest beyond are dropped by heldLimit, the rest delivered")
    func testNoStreamYet_WhenMoreThanHeldLimit_CountsHeldLimitDrops() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        _ = try await data.startNotifying().value
        let sent = await h.simulator.burst(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, count: 105) {
            [UInt8](Self.value($0))
        }
        #expect(sent.delivered == 105)
        try await waitUntil("105 received", timeout: .seconds(30)) { data.notificationCounts.received == 105 }
        #expect(data.notificationCounts.held == 100)
        #expect(data.notificationCounts.dropped(by: .heldLimit) == 5)
        let got = Collector<Int>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { got.append(Self.number($0.data)) }
        #expect(try await got.wait(for: 100) == Array(5..<105))
        let counts = data.notificationCounts
        #expect(counts == NotificationCounts(received: 105, delivered: 100, held: 0, droppedByRule: [.heldLimit: 5]))
    }
}
