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
        let trap = SignalTrap(exit: { events.append("exit \($0)") })
        trap.onShutdown { events.append("a") }
        trap.onShutdown { try? await Task.sleep(for: .milliseconds(50)); events.append("b") }
        let removed = trap.onShutdown { events.append("removed") }
        trap.removeCleanup(removed)
        // A deadline far beyond the cleanups' 50 ms: on a loaded machine the cooperative pool can
        // take seconds to start them, which must not turn "all done in time" into "exit 1".
        trap.shutdown(deadline: .seconds(30))
        let items = try await events.wait(for: 3, timeout: .seconds(40))
        #expect(Set(items.prefix(2)) == ["a", "b"])
        #expect(items[2] == "exit 0")
        #expect(!items.contains("removed"))
    }

    @Test("a cleanup outliving the deadline does not hold the exit: status 1")
    func deadline() async throws {
        let events = Collector<String>()
        let trap = SignalTrap(exit: { events.append("exit \($0)") })
        trap.onShutdown { try? await Task.sleep(for: .seconds(30)) }
        let clock = ContinuousClock()
        let start = clock.now
        trap.shutdown(deadline: .milliseconds(200))
        #expect(try await events.wait(for: 1, timeout: .seconds(10)) == ["exit 1"])
        #expect(clock.now - start < Sanitizers.scaled(.seconds(10)))  // far below the cleanup's 30 s
    }
}
