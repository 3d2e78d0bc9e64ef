// A restart of bluetoothd recorded by bluez-record (against the simulator's restart) and played
// back: the app sees bluetoothd go and come back, as it did when it was recorded.
@_spi(Testing) import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

@Suite("bluez-record through a restart of bluetoothd, then replay", .serialized)
struct RecordReplayRestartTests {
    static let tag = "C0:FF:EE:00:00:08"

    /// What the app saw: the manager's states in order, the devices found by the scan that
    /// bluetoothd's restart ended, how it ended, and the devices found by a scan after it.
    struct Seen: Equatable, CustomStringConvertible {
        var states: [ManagerState] = []
        var before: [String] = []
        var scanEnd: [String] = []
        var after: [String] = []
        var description: String { "states \(states), found before \(before), scan ended \(scanEnd), found after \(after)" }
    }

    /// The app under test, a gateway's scan: scan until the tag is found and go on scanning;
    /// `restart()` (bluetoothd restarts, or the replay plays it); the scan ends; once the
    /// manager is powered on again, scan again until the tag is found.
    static func app(_ manager: CentralManager, _ phase: String, restart: @Sendable () async throws -> Void) async throws -> Seen {
        let states = Collector<ManagerState>()
        manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let found = Collector<String>(), ended = Collector<String>()
        manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onComplete(context: .immediate) { result in
            switch result {
            case .success(let p): found.append(p.address)
            case .failure(let error): ended.append("\(error)")
            }
        }
        var seen = Seen()
        seen.before = try await found.wait(for: 1, timeout: .seconds(10))
        try await restart()
        seen.scanEnd = try await ended.wait(for: 1, timeout: .seconds(10))
        do {
            _ = try await states.wait(until: { s in
                guard let off = s.firstIndex(where: { $0 != .poweredOn && $0 != .unknown }) else { return false }
                return s[off...].contains(.poweredOn)
            }, timeout: .seconds(15))
        } catch {
            Issue.record("\(phase): no power-on after the restart: states \(states.items)")
            throw error
        }
        let again = Collector<Peripheral>()
        manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { again.append($0) }
        seen.after = try await again.wait(for: 1, timeout: .seconds(10)).map(\.address)
        manager.stopScanning()
        seen.states = states.items
        return seen
    }

    @Test("a restart of bluetoothd is recorded (the bus's NameOwnerChanged, bluetoothd's new objects) and replays to the same states and finds")
    func restartRecordedAndReplayed() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(simulatedSensorTag(Self.tag))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-record-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = try ExampleProcess("bluez-record", ["--bus", rig.bus.address, "--name", rig.client.uniqueName,
                                                           "--output", file.path], bus: rig.bus.address)
        _ = try await recorder.waitLine("recording") { $0 == "recording" }
        let simulator = rig.simulator
        let recorded = try await Self.app(rig.manager, "recording") { try await simulator.restart() }
        recorder.send(SIGINT)
        #expect(try await recorder.exitCode(within: .seconds(10)) == 0, "\(recorder.stderr)")
        let scenario = try BlueZScenario(contentsOf: file)
        let owners = scenario.events.filter { $0.message.member == "NameOwnerChanged" }
        #expect(owners.count == 2, "the bluetoothd going and the new one coming: \(owners)")
        #expect(recorded.before == [Self.tag] && recorded.after == [Self.tag], "\(recorded)")

        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: scenario)
        defer { replay.stop() }
        let manager = CentralManager(session: replay.session())
        defer { manager.reset() }
        let replayed: Seen
        do {
            replayed = try await Self.app(manager, "replay") {}
        } catch {
            Issue.record("the replay's report: \(replay.report)\nthe recording:\n\((try? String(contentsOf: file, encoding: .utf8)) ?? "unreadable")")
            throw error
        }
        #expect(replayed == recorded)
        let report = replay.report
        #expect(report.divergences.isEmpty, "\(report)")
        #expect(!report.unreached.contains { $0.event.isCall }, "\(report)")
    }
}
