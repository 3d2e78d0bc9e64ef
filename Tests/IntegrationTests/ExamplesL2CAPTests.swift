// accelerometer-peripheral --l2cap and central-scanner --l2cap as processes, with --simulate
// (both roles in one process: the simulator's L2CAP channels are socket pairs inside it).
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Examples: L2CAP echo", .serialized)
struct ExamplesL2CAPTests {
    @Test("central-scanner --simulate --l2cap ADDRESS --psm N --bytes B --json: the simulated SensorTag publishes the echo on N; B bytes come back intact; one l2cap event with the throughput; exit 0")
    func scannerEcho() async throws {
        let scanner = try ExampleProcess("central-scanner", ["--simulate", "--l2cap", "00:B1:0E:5C:00:01", "--psm", "131", "--bytes", "50000", "--json"],
                                         bus: "unix:path=/nonexistent")
        #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "stderr: \(scanner.stderr)")
        let event = scanner.events.first { $0["event"] as? String == "l2cap" && $0["bytes"] != nil }
        #expect(event?["psm"] as? Int == 131, "events: \(scanner.events)")
        #expect(event?["bytes"] as? Int == 50000)
        #expect(event?["matched"] as? Bool == true)
        #expect((event?["bytesPerSecond"] as? Double ?? 0) > 0)
        #expect(event?["mtu"] as? Int == 672)
    }

    @Test("accelerometer-peripheral --simulate --l2cap --json prints {\"event\":\"l2cap\",\"psm\":N} with a dynamic PSM, the simulated central's 4 kB echo comes back intact, SIGTERM exits 0")
    func peripheralPublishes() async throws {
        let peripheral = try ExampleProcess("accelerometer-peripheral", ["--simulate", "--l2cap", "--json"], bus: "unix:path=/nonexistent")
        let line = try await peripheral.waitLine("l2cap") { ExampleProcess.parse($0)?["event"] as? String == "l2cap" }
        let psm = ExampleProcess.parse(line)?["psm"] as? Int ?? 0
        #expect((0x80...0xFF).contains(psm), "\(line)")
        // The simulated central (hci0) opens the channel once subscribed, sends 4 kB, checks the
        // echo and closes: the peripheral reports the channel and, closed, what it echoed.
        let opened = try await peripheral.waitLine("l2cap-open", timeout: .seconds(30)) { ExampleProcess.parse($0)?["event"] as? String == "l2cap-open" }
        #expect(ExampleProcess.parse(opened)?["mtu"] as? Int == 672)
        let closed = try await peripheral.waitLine("l2cap-closed", timeout: .seconds(30)) { ExampleProcess.parse($0)?["event"] as? String == "l2cap-closed" }
        #expect(ExampleProcess.parse(closed)?["bytes"] as? Int == 4096, "\(closed)")
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(10)) == 0, "stderr: \(peripheral.stderr)")
        // The simulated central's report goes to stderr (a background role's console).
        #expect(peripheral.stderr.contains("L2CAP echo on PSM \(psm): 4096 bytes came back intact"), "stderr: \(peripheral.stderr)")
    }

    @Test("--l2cap without --psm, --psm or --bytes without --l2cap, a bad address, --l2cap with --connect: exit 64")
    func usageErrors() async throws {
        let cases = [["--l2cap", "C0:FF:EE:00:00:01"], ["--psm", "129"], ["--bytes", "10"], ["--l2cap", "C0:FF:EE:00:00", "--psm", "129"],
                     ["--l2cap", "C0:FF:EE:00:00:01", "--psm", "129", "--connect", "C0:FF:EE:00:00:01"],
                     ["--l2cap", "C0:FF:EE:00:00:01", "--psm", "0"]]
        for args in cases {
            let p = try ExampleProcess("central-scanner", args, bus: "unix:path=/nonexistent")
            #expect(try await p.exitCode(within: .seconds(10)) == 64, "\(args): \(p.stderr)")
        }
    }
}
