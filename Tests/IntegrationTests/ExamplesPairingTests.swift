// The examples' pairing flags as processes against the simulator: accelerometer-peripheral
// --secure (encrypt-read Data, a default agent) and central-scanner --pair.
import BlueZSimulator
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Examples: pairing flags", .serialized)
struct ExamplesPairingTests {
    @Test("central-scanner --pair ADDRESS --auto-confirm pairs with accelerometer-peripheral --secure, whose agent is asked and accepts")
    func scannerPairsWithSecurePeripheral() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let peripheral = try ExampleProcess("accelerometer-peripheral", ["--adapter", "hci1", "--json", "--secure"], bus: bus.address)
        try await peripheral.waitLine("advertising") { ExampleProcess.parse($0)?["advertising"] as? Bool == true }
        let address = try need(simulator.adapterAddress(1), "hci1's address")
        let scanner = try ExampleProcess("central-scanner", ["--adapter", "hci0", "--json", "--pair", address, "--auto-confirm"],
                                         bus: bus.address)
        #expect(try await scanner.exitCode(within: .seconds(20)) == 0, "stderr: \(scanner.stderr)")
        let paired = scanner.events.first { $0["event"] as? String == "paired" }
        #expect(paired?["bonded"] as? Bool == true, "events: \(scanner.events)")
        _ = try await peripheral.waitLine("pairing request") { ExampleProcess.parse($0)?["event"] as? String == "pairing" }
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(10)) == 0)
    }

    @Test("--passkey and --auto-confirm do not mix; --passkey needs --pair (exit 64)")
    func pairingFlagsValidated() async throws {
        for args in [["--pair", "00:11:22:33:44:55", "--passkey", "1", "--auto-confirm"], ["--passkey", "123456"]] {
            let p = try ExampleProcess("central-scanner", args, bus: "unix:path=/nonexistent")
            #expect(try await p.exitCode(within: .seconds(10)) == 64, "\(args)")
        }
    }
}
