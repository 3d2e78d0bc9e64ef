// Recordings of real bluetoothd (Scripts/bluez-vm/steps/record, in the VM) replayed to the same
// example program: it prints what it printed there.
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Recordings of real bluetoothd, replayed", .serialized)
struct RecordedBlueZTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings")

    @Test("central-scanner --connect recorded against bluetoothd replays to the same output",
          arguments: ["5.66", "5.82"])
    func connectReplay(version: String) async throws {
        let file = Self.directory.appendingPathComponent("connect-\(version).bluez.jsonl")
        let scenario = try BlueZScenario(contentsOf: file)
        let expected = try String(contentsOf: Self.directory.appendingPathComponent("connect-\(version).out"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        // The address the example was given: "central-scanner --connect ADDRESS …" in the note.
        let words = scenario.note.split(separator: " ").map(String.init)
        let address = try #require(words.firstIndex(of: "--connect").map { words[$0 + 1] })
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: scenario)
        defer { replay.stop() }
        let central = try ExampleProcess("central-scanner", ["--connect", address, "--adapter", "hci0", "--json"], bus: bus.address)
        #expect(try await central.exitCode(within: .seconds(60)) == 0, "\(central.stderr)\n\(replay.report)")
        #expect(central.lines.items == expected, "\(central.stderr)")
        #expect(replay.report.divergences.isEmpty, "\(replay.report)")
        #expect(!replay.report.unreached.contains { $0.event.isCall }, "\(replay.report)")
    }
}
