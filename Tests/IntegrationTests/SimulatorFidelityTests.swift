// The simulator against the recordings of real bluetoothd: the same example run against both,
// what it printed compared line by line; each difference is listed here with its reason.
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Simulator fidelity against recordings of real bluetoothd", .serialized)
struct SimulatorFidelityTests {
    /// What real bluetoothd shows that the simulator does not, per version, with the reason.
    /// The peripheral's own bluetoothd adds its built-in services to every GATT database it
    /// serves: Generic Attribute (1801: Service Changed, and from 5.56 Client Supported Features
    /// and Database Hash) and Device Information (180A: PnP ID); 5.82 also GAP (1800: Device Name,
    /// Appearance). The simulator serves only what the app registered, so `services` counts
    /// differ by as many.
    static func onlyReal(_ version: String) -> [String] {
        var lines = [
            #"{"event":"service","address":"ADDRESS","uuid":"00001801-0000-1000-8000-00805f9b34fb"}"#,
            #"{"event":"characteristic","service":"00001801-0000-1000-8000-00805f9b34fb","uuid":"00002a05-0000-1000-8000-00805f9b34fb","properties":["indicate"]}"#,
            #"{"event":"characteristic","service":"00001801-0000-1000-8000-00805f9b34fb","uuid":"00002b29-0000-1000-8000-00805f9b34fb","properties":["read","write"]}"#,
            #"{"event":"characteristic","service":"00001801-0000-1000-8000-00805f9b34fb","uuid":"00002b2a-0000-1000-8000-00805f9b34fb","properties":["read"]}"#,
            #"{"event":"service","address":"ADDRESS","uuid":"0000180a-0000-1000-8000-00805f9b34fb"}"#,
            #"{"event":"characteristic","service":"0000180a-0000-1000-8000-00805f9b34fb","uuid":"00002a50-0000-1000-8000-00805f9b34fb","properties":["read"]}"#,
        ]
        if version == "5.82" {
            lines += [
                #"{"event":"service","address":"ADDRESS","uuid":"00001800-0000-1000-8000-00805f9b34fb"}"#,
                #"{"event":"characteristic","service":"00001800-0000-1000-8000-00805f9b34fb","uuid":"00002a00-0000-1000-8000-00805f9b34fb","properties":["read"]}"#,
                #"{"event":"characteristic","service":"00001800-0000-1000-8000-00805f9b34fb","uuid":"00002a01-0000-1000-8000-00805f9b34fb","properties":["read"]}"#,
            ]
        }
        return lines
    }

    @Test("central-scanner --connect: the simulator prints what real bluetoothd printed, but for the peripheral's built-in services",
          arguments: ["5.66", "5.82"])
    func connectOutput(version: String) async throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings")
        let realAddress = try #require(try BlueZScenario(contentsOf: directory.appendingPathComponent("connect-\(version).bluez.jsonl"))
            .note.split(separator: " ").map(String.init).drop { $0 != "--connect" }.dropFirst().first)
        let real = try String(contentsOf: directory.appendingPathComponent("connect-\(version).out"), encoding: .utf8)
            .split(separator: "\n").map { $0.replacingOccurrences(of: realAddress, with: "ADDRESS") }

        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2, profile: version == "5.82" ? .bluez5_82 : .bluez5_66)
        defer { simulator.stop() }
        let peripheral = try ExampleProcess("accelerometer-peripheral", ["--adapter", "hci1", "--json"], bus: bus.address)
        try await peripheral.waitLine("advertising") { ExampleProcess.parse($0)?["advertising"] as? Bool == true }
        let address = try need(simulator.adapterAddress(1), "hci1's address")
        let scanner = try ExampleProcess("central-scanner", ["--connect", address, "--adapter", "hci0", "--json"], bus: bus.address)
        #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "stderr: \(scanner.stderr)")
        peripheral.send(SIGTERM)
        _ = try await peripheral.exitCode(within: .seconds(10))
        let simulated = scanner.lines.items.map { $0.replacingOccurrences(of: address, with: "ADDRESS") }

        let onlyReal = real.filter { !simulated.contains($0) }
        let onlySimulated = simulated.filter { !real.contains($0) }
        let services = Self.onlyReal(version).filter { $0.contains(#""event":"service""#) }.count
        let expectedOnlyReal = Self.onlyReal(version) + [#"{"event":"disconnected","address":"ADDRESS","services":\#(services + 1)}"#]
        #expect(onlyReal.sorted() == expectedOnlyReal.sorted(), "only on real bluetoothd: \(onlyReal)")
        // The example counts the services it still holds once disconnected. Real bluetoothd
        // (btvirt) answered Disconnect after 2.7 s (5.66) with the GATT objects still there:
        // all of them counted. The simulator answers at once and removes them right after, so
        // the count is 1 or 0 depending on which the example sees first (a difference left in
        // the simulator: its Disconnect is not timed like bluetoothd's).
        #expect(onlySimulated.count == 1 && [0, 1].contains { onlySimulated.first == #"{"event":"disconnected","address":"ADDRESS","services":\#($0)}"# },
                "only on the simulator: \(onlySimulated)")
    }
}
