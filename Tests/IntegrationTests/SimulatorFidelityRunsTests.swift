// The simulator against the accelerometer, pairing and restart recordings of real bluetoothd:
// the same example run against both, the same thing done to it (the link dropped after the 5th
// sample, bluetoothd restarted after the first discovery), and what it printed compared.
import BlueZSimulator
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Simulator fidelity: the accelerometer, pairing and restart runs", .serialized)
struct SimulatorFidelityRunsTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings")

    /// What a line says, without what differs by nature between two runs: the sample values
    /// (the peripheral's motion depends on when it started), RSSI and the address.
    static func shape(_ line: String, address: String) -> String {
        guard let event = ExampleProcess.parse(line), let name = event["event"] as? String else { return line }
        switch name {
        case "sample": return "sample"
        case "discovered": return "discovered \(event["name"] as? String ?? "-") \(event["uuids"] as? [String] ?? [])"
        case "found": return "found \(event["name"] as? String ?? "-")"
        default: return line.replacingOccurrences(of: address, with: "ADDRESS")
        }
    }

    /// Runs central-scanner `arguments` against the simulator (the `version` profile) with
    /// accelerometer-peripheral `peripheralArguments` on hci1; `during` acts on the simulator
    /// while it runs. Returns its lines' shapes.
    static func simulated(_ version: String, _ arguments: [String], peripheral peripheralArguments: [String] = [],
                          during: @Sendable (BlueZSimulator, ExampleProcess, String) async throws -> Void = { _, _, _ in }) async throws -> [String] {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2, profile: version == "5.82" ? .bluez5_82 : .bluez5_66)
        defer { simulator.stop() }
        let peripheral = try ExampleProcess("accelerometer-peripheral", ["--adapter", "hci1", "--json"] + peripheralArguments, bus: bus.address)
        try await peripheral.waitLine("advertising") { ExampleProcess.parse($0)?["advertising"] as? Bool == true }
        let address = try need(simulator.adapterAddress(1), "hci1's address")
        let scanner = try ExampleProcess("central-scanner", arguments.map { $0 == "ADDRESS" ? address : $0 }, bus: bus.address)
        try await during(simulator, scanner, address)
        #expect(try await scanner.exitCode(within: .seconds(60)) == 0, "stderr: \(scanner.stderr)")
        peripheral.send(SIGTERM)
        _ = try await peripheral.exitCode(within: .seconds(10))
        return scanner.lines.items.map { shape($0, address: address) }
    }

    static func recorded(_ name: String, _ version: String) throws -> [String] {
        let scenario = try BlueZScenario(contentsOf: directory.appendingPathComponent("\(name)-\(version).bluez.jsonl"))
        let words = scenario.note.split(separator: " ").map(String.init)
        // The peripheral's address: in the note, or in the first line that names one.
        let text = try String(contentsOf: directory.appendingPathComponent("\(name)-\(version).out"), encoding: .utf8)
        let address = words.firstIndex { $0 == "--connect" || $0 == "--pair" }.map { words[$0 + 1] }
            ?? text.split(separator: "\n").compactMap { ExampleProcess.parse(String($0))?["address"] as? String }.first ?? "-"
        return text.split(separator: "\n").map { shape(String($0), address: address) }
    }

    @Test("central-scanner --accelerometer --start-notify through a link drop: the same events in the same order", arguments: ["5.66", "5.82"])
    func accelerometer(version: String) async throws {
        // How many samples came before the link dropped is the harness's timing (the VM's
        // Disconnect took longer to make): runs of samples compare as one.
        func runs(_ lines: [String]) -> [String] {
            lines.reduce(into: []) { out, line in if !(line == "sample" && out.last == "sample") { out.append(line) } }
        }
        let real = try Self.recorded("accelerometer", version)
        let simulated = try await Self.simulated(version, ["--accelerometer", "--samples", "20", "--period-ms", "500", "--start-notify",
                                                           "--adapter", "hci0", "--json"]) { simulator, scanner, address in
            var samples = 0
            _ = try await scanner.waitLine("the 5th sample") { line in
                if ExampleProcess.parse(line)?["event"] as? String == "sample" { samples += 1 }
                return samples == 5
            }
            simulator.dropLink(device: "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_"))
        }
        #expect(runs(simulated) == runs(real))
        #expect(simulated.filter { $0 == "sample" }.count == 20 && real.filter { $0 == "sample" }.count == 20)
    }

    @Test("central-scanner --pair against --secure: the same lines", arguments: ["5.66", "5.82"])
    func pair(version: String) async throws {
        let real = try Self.recorded("pair", version)
        let simulated = try await Self.simulated(version, ["--pair", "ADDRESS", "--adapter", "hci0", "--json"], peripheral: ["--secure"])
        #expect(simulated == real)
    }

    @Test("central-scanner --duration through a restart of bluetoothd: the same events in the same order", arguments: ["5.66", "5.82"])
    func restart(version: String) async throws {
        let real = try Self.recorded("restart", version)
        let simulated = try await Self.simulated(version, ["--duration", "16", "--service", "f000aa10-0451-4000-b000-000000000000",
                                                           "--adapter", "hci0", "--json"]) { simulator, scanner, _ in
            _ = try await scanner.waitLine("discovered") { ExampleProcess.parse($0)?["event"] as? String == "discovered" }
            // The recording stopped bluetoothd with SIGTERM: it powered its adapters off first.
            try await simulator.restart(graceful: true)
        }
        #expect(simulated == real)
    }
}
