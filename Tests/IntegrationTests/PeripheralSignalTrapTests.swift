// SignalTrap: cleanups run before exit, bounded by the deadline.

import BlueCapKit
import Foundation
import Testing
import TestSupport

@Suite("Peripheral role: SignalTrap shutdown hook")
struct PeripheralSignalTrapTests {
    @Test("shutdown runs every cleanup, then exits 0")
    func cleanupsThenExit() async throws {
        let events = Collector<String>()
        // The deadline is on a manual clock never advanced: however long the cooperative pool
        // takes to start the cleanups on a loaded machine, "all done in time" stays exit 0.
        let trap = SignalTrap(exit: { events.append("exit \($0)") }, clock: ManualClock())
        trap.onShutdown { events.append("a") }
        trap.onShutdown { try? await Task.sleep(for: .milliseconds(50)); events.append("b") }
        let removed = trap.onShutdown { events.append("removed") }
        trap.removeCleanup(removed)
        trap.shutdown(deadline: .seconds(30))
        let items = try await events.wait(for: 3, timeout: .seconds(40))
        #expect(Set(items.prefix(2)) == ["a", "b"])
        #expect(items[2] == "exit 0")
        #expect(!items.contains("removed"))
    }

    @Test("a cleanup outliving the deadline does not hold the exit: status 1")
    func deadline() async throws {
        let events = Collector<String>()
        let clock = ManualClock()
        let trap = SignalTrap(exit: { events.append("exit \($0)") }, clock: clock)
        let gate = Collector<Bool>()
        trap.onShutdown { _ = try? await gate.wait(for: 1, timeout: .seconds(60)) }  // ends only when let go
        trap.shutdown(deadline: .milliseconds(200))
        clock.advance(by: .milliseconds(199))
        #expect(events.items.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(events.items == ["exit 1"])
        gate.append(true)
    }
}
