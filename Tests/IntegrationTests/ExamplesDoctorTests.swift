// central-scanner --doctor as a process: JSON lines against the simulated world, exit 2
// without bluetoothd.

import Foundation
import Testing
import TestSupport

@Suite("central-scanner --doctor", .serialized)
struct ExamplesDoctorTests {
    @Test("--doctor --json --simulate prints one finding per line, no problem, exit 0")
    func simulated() async throws {
        let bus = try TestBus()  // unused with --simulate; ExampleProcess points the system bus at it
        defer { bus.stop() }
        let p = try ExampleProcess("central-scanner", ["--doctor", "--json", "--simulate"], bus: bus.address)
        #expect(try await p.exitCode(within: .seconds(30)) == 0)
        let findings = p.lines.items.compactMap(ExampleProcess.parse).filter { $0["event"] as? String == "finding" }
        let checks = findings.compactMap { $0["check"] as? String }
        #expect(checks == ["bluetoothd", "policy.call", "policy.agent", "adapters", "adapter hci0", "advertising hci0",
                           "adapter hci1", "advertising hci1", "policy.advertisement", "policy.application",
                           "experimental", "rfkill", "main.conf", "version"])
        #expect(findings.allSatisfy { ["ok", "info"].contains($0["status"] as? String) })
        #expect(findings.allSatisfy { $0["cause"] is String && $0["fix"] is String })
        // The simulated world runs bluetoothd as with --experimental.
        #expect(findings.first { $0["check"] as? String == "experimental" }?["status"] as? String == "ok")
    }

    @Test("--doctor without bluetoothd: bluetoothd is a problem, exit 2")
    func noBluetoothd() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let p = try ExampleProcess("central-scanner", ["--doctor", "--json"], bus: bus.address)
        #expect(try await p.exitCode(within: .seconds(30)) == 2)
        let first = p.lines.items.compactMap(ExampleProcess.parse).first { $0["event"] as? String == "finding" }
        #expect(first?["check"] as? String == "bluetoothd")
        #expect(first?["status"] as? String == "problem")
    }

    @Test("--doctor takes only --json and --simulate")
    func usage() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let p = try ExampleProcess("central-scanner", ["--doctor", "--duration", "3"], bus: bus.address)
        #expect(try await p.exitCode(within: .seconds(10)) == 64)
    }
}
