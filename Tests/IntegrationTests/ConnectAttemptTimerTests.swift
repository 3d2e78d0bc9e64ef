// The connection attempt's timer ends with its attempt (ConnectionStateMachine's cancelAttemptTimer, taken out by Peripheral.feed).
@testable import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Connection attempt timer", .serialized, .timeLimit(.minutes(1)))
struct ConnectAttemptTimerTests {
    let tag = "C0:FF:EE:00:00:01"

    static func hasAttemptTimer(_ p: Peripheral) -> Bool { p.state.withLock { $0.attemptTimer != nil } }

    @Test("an attempt's timer is gone once it connects, and once disconnect() cancels it, not left to its deadline")
    func timerEndsWithTheAttempt() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)

        // Connected: the timer (30 s) is cancelled before `.connect` is yielded.
        let connected = h.connect(p, connectionTimeout: .seconds(30))
        try await connected.events.wait(for: 1)
        #expect(connected.events.items == [.connect])
        #expect(!Self.hasAttemptTimer(p))

        // Cancelled while Connect is still unanswered (delayed 5 s): the timer is there until then.
        p.disconnect()
        try await connected.events.wait(for: 2)
        h.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .delay(.seconds(5)), count: 1))
        let cancelled = h.connect(p, connectionTimeout: .seconds(30))
        #expect(Self.hasAttemptTimer(p))
        p.disconnect()
        #expect(!Self.hasAttemptTimer(p))
        try await cancelled.events.wait(for: 1)
        #expect(cancelled.events.items == [.forceDisconnect])
    }
}
