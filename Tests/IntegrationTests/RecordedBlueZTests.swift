// Recordings of real bluetoothd (Scripts/bluez-vm/steps/record, in the VM) replayed to the same
// example program: it prints what it printed there, and makes every call it made there.
import BlueZSimulator
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Recordings of real bluetoothd, replayed", .serialized)
struct RecordedBlueZTests {
    /// The committed recordings, or with `BLUECAP_RECORDINGS` set those of this run's VM tier
    /// (`Scripts/bluez-vm/test-vm`'s record step).
    static let directory = ProcessInfo.processInfo.environment["BLUECAP_RECORDINGS"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings")

    /// The versions recorded in ``directory``.
    static let versions: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let found = Set(names.compactMap { name -> String? in
            guard name.hasPrefix("connect-"), name.hasSuffix(".bluez.jsonl") else { return nil }
            return String(name.dropFirst("connect-".count).dropLast(".bluez.jsonl".count))
        })
        return found.sorted()
    }()

    /// A recorded run of central-scanner: the recording's name and the arguments it was given
    /// (ADDRESS: the peripheral's address, read from the recording's note).
    struct Run: Sendable, CustomStringConvertible {
        let name: String
        let version: String
        let arguments: [String]
        /// The exit status it had in the VM.
        var status: Int32 = 0
        /// What its stderr said there (checked when set).
        var says: String?
        var description: String { "\(name)-\(version)" }
    }

    static let runs: [Run] = versions.flatMap { version in [
        Run(name: "connect", version: version, arguments: ["--connect", "ADDRESS", "--adapter", "hci0", "--json"]),
        Run(name: "accelerometer", version: version,
            arguments: ["--accelerometer", "--samples", "20", "--period-ms", "500", "--start-notify", "--adapter", "hci0", "--json"]),
        Run(name: "pair", version: version, arguments: ["--pair", "ADDRESS", "--adapter", "hci0", "--json"]),
        Run(name: "restart", version: version,
            arguments: ["--duration", "16", "--service", "f000aa10-0451-4000-b000-000000000000", "--adapter", "hci0", "--json"]),
        Run(name: "restart-killed", version: version,
            arguments: ["--duration", "16", "--service", "f000aa10-0451-4000-b000-000000000000", "--adapter", "hci0", "--json"], status: 1,
            says: "power the adapter off and on"),
    ] }

    @Test("the recordings are there: every run of each version found (5.66 and 5.82 when committed)")
    func recordingsPresent() throws {
        #expect(!Self.versions.isEmpty, "no connect-VERSION.bluez.jsonl in \(Self.directory.path)")
        if ProcessInfo.processInfo.environment["BLUECAP_RECORDINGS"] == nil { #expect(Self.versions == ["5.66", "5.82"]) }
        for run in Self.runs {
            #expect(FileManager.default.fileExists(atPath: Self.directory.appendingPathComponent("\(run).bluez.jsonl").path), "\(run)")
        }
    }

    @Test("central-scanner recorded against bluetoothd replays to the same output and calls", arguments: runs)
    func replay(_ run: Run) async throws {
        let scenario = try BlueZScenario(contentsOf: Self.directory.appendingPathComponent("\(run).bluez.jsonl"))
        let expected = try String(contentsOf: Self.directory.appendingPathComponent("\(run).out"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        // The address the example was given: "central-scanner --connect|--pair ADDRESS …" in the note.
        let words = scenario.note.split(separator: " ").map(String.init)
        let address = words.firstIndex { $0 == "--connect" || $0 == "--pair" }.map { words[$0 + 1] }
        let arguments = try run.arguments.map { $0 == "ADDRESS" ? try need(address, "the address in the note") : $0 }
        #expect(scenario.note.hasPrefix("central-scanner " + arguments.joined(separator: " ")), "\(scenario.note)")
        // The exit status the recording step saw (NAME-VERSION.status, written by steps/record),
        // else the scenario's: restart-killed ends either way on real bluetoothd (lesson 30).
        let status = (try? String(contentsOf: Self.directory.appendingPathComponent("\(run).status"), encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? run.status
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: scenario)
        defer { replay.stop() }
        let central = try ExampleProcess("central-scanner", arguments, bus: bus.address)
        #expect(try await central.exitCode(within: .seconds(60)) == status, "\(central.stderr)\n\(replay.report)")
        #expect(central.lines.items == expected, "\(central.stderr)")
        if let says = run.says, status == run.status { #expect(central.stderr.contains(says), "\(central.stderr)") }
        #expect(replay.report.divergences.isEmpty, "\(replay.report)")
        #expect(!replay.report.unreached.contains { $0.event.isCall }, "\(replay.report)\n\(central.stderr)")
    }

    @Test("the accelerometer recording against changed app code (another update period written) fails naming the write expected and the write seen",
          arguments: ["5.66", "5.82"])
    func changedWrite(version: String) async throws {
        let scenario = try BlueZScenario(contentsOf: Self.directory.appendingPathComponent("accelerometer-\(version).bluez.jsonl"))
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: scenario)
        defer { replay.stop() }
        // Recorded with --period-ms 500 (period byte 50); this run asks for 100 ms (byte 10).
        let central = try ExampleProcess("central-scanner", ["--accelerometer", "--samples", "20", "--period-ms", "100", "--start-notify",
                                                             "--adapter", "hci0", "--json"], bus: bus.address)
        try await waitUntil("a divergence", timeout: .seconds(30)) { !replay.report.divergences.isEmpty }
        central.send(SIGINT)
        _ = try await central.exitCode(within: .seconds(20))
        let message = try #require(replay.report.divergences.first)
        #expect(message.contains("expected /org/bluez/hci0/dev_"), "\(message)")
        #expect(message.contains("org.bluez.GattCharacteristic1.WriteValue([byte 50]"), "\(message)")
        #expect(message.contains("seen /org/bluez/hci0/dev_"), "\(message)")
        #expect(message.contains("org.bluez.GattCharacteristic1.WriteValue([byte 10]"), "\(message)")
    }
}
