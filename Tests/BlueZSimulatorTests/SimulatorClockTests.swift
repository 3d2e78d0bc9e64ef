// SimulatorClockTests: the simulator's delays follow the clock it is given.

import BlueZSimulator
import DBus
import Testing
import TestSupport

@Suite("Simulator on a manual clock", .timeLimit(.minutes(1)))
struct SimulatorClockTests {
    @Test("a delayed reply is sent only once the shared manual clock has passed the delay")
    func delayedReplyFollowsTheClock() async throws {
        let clock = ManualClock()
        let h = try await BusHarness.start(adapters: 1, clock: clock)
        defer { h.stop() }
        h.simulator.inject(MethodFault("org.bluez.Adapter1.StartDiscovery", action: .delay(.seconds(5)), count: 1))
        let before = clock.pendingCount
        let replied = Collector<Bool>()
        async let call: Void = {
            try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery", timeout: .seconds(60))
            replied.append(true)
        }()
        // The simulator has the call once it scheduled the delayed reply on the clock.
        await clock.waitForPending(atLeast: before + 1)
        clock.advance(by: .milliseconds(4_999))
        #expect(replied.items.isEmpty)
        clock.advance(by: .milliseconds(1))
        try await call
        #expect(replied.items == [true])
    }
}
