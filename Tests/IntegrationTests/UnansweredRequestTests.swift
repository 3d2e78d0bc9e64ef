// A request the peripheral app never answers: the central gets the ATT Unlikely Error (0x0E),
// distinct from a deliberate application error (0x80), and the app is told.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Peripheral role: unanswered requests", .serialized, .timeLimit(.minutes(1)))
struct UnansweredRequestTests {
    @Test("an unanswered write reaches the central as ATT 0x0E, a deliberate .application(0x80) as 0x80, and the app sees the event")
    func unansweredWrite() async throws {
        let h = try await PeripheralRig.start(recording: true, manualClock: true)
        defer { Task { await h.stop() } }
        let service = try await PeripheralAccelerometerTests.serve(h)
        let enabled = try #require(service.characteristic(Accelerometer.Enabled.uuid))
        enabled.requestTimeout = .milliseconds(200)
        let requests = collect(enabled.startRespondingToWriteRequests())
        let unanswered = Collector<UnansweredRequest>()
        enabled.whenRequestUnanswered().onSuccess(context: .immediate) { unanswered.append($0) }
        _ = try await h.discoverPeripheral()
        try await h.connectPeripheral()
        let path = try await h.characteristicPath(Accelerometer.Enabled.uuid)

        // Left unanswered: the central's write fails with 0x0E once the request timeout (on the
        // peripheral manager's manual clock) falls due, not a moment before.
        let clock = try #require(h.clock)
        let write = Task { await h.write(path, [1]) }
        await clock.waitForPending(atLeast: 1)
        clock.advance(by: .milliseconds(199))
        #expect(enabled.unansweredRequestCount == 0 && unanswered.items.isEmpty)
        clock.advance(by: .milliseconds(1))
        let ignored = try #require(await write.value, "the unanswered write succeeded")
        #expect(ATTError(bluezMessage: ignored.message) == .unlikelyError, "\(ignored)")
        let event = try await unanswered.wait(for: 1, timeout: .seconds(5))[0]
        #expect(event.request.value == Data([1]))
        #expect(event.waited == .milliseconds(200))
        #expect(event.request.isAnswered)
        #expect(enabled.unansweredRequestCount == 1)
        #expect(enabled.value == Data([0]), "an unanswered write stores nothing")

        // Refused on purpose with an application error: 0x80, and no unanswered event.
        let refused = Task { await h.write(path, [2]) }
        let second = try await requests.wait(for: 2, timeout: .seconds(5))[1]
        #expect(enabled.respondToRequest(second.request, withResult: .failure(.application(0x80))))
        let deliberate = try #require(await refused.value)
        #expect(ATTError(bluezMessage: deliberate.message) == .application(0x80), "\(deliberate)")
        #expect(enabled.unansweredRequestCount == 1)
        #expect(unanswered.items.count == 1)
    }
}
