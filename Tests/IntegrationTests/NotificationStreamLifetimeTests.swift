// A characteristic drops an update stream once every subscription to it was cancelled.
@testable import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Notification stream lifetime", .serialized, .timeLimit(.minutes(1)))
struct NotificationStreamLifetimeTests {
    let tag = "C0:FF:EE:00:00:01"

    @Test("first(), a cancelled token and the end of a for-await loop each drop their stream from the characteristic")
    func abandonedStreamsAreDropped() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        _ = try await data.startNotifying().value
        let kept = Collector<UInt8>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let b = $0.data?.first { kept.append(b) } }
        let next = data.receiveNotificationUpdates().first()
        let token = CancelToken()
        data.receiveNotificationUpdates().onSuccess(context: .immediate, cancelToken: token) { _ in }
        let loop = Task { () -> UInt8? in
            for try await update in data.receiveNotificationUpdates().values { return update.data?.first }
            return nil
        }
        try await waitUntil("four streams open") { data.openUpdateStreamCount == 4 }
        token.cancel()
        #expect(data.openUpdateStreamCount == 3)
        h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([7]))
        #expect(try await next.value.data == Data([7]))
        #expect(try await loop.value == 7)
        try await waitUntil("only the subscription without a token left") { data.openUpdateStreamCount == 1 }
        #expect(try await kept.wait(for: 1) == [7])
    }
}
