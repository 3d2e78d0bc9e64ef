// bluez-record as a process against the simulator on a private bus, then the recording
// replayed to the same app code: the same samples, a changed app named where it diverges.
@_spi(Testing) import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("bluez-record, then replay", .serialized)
struct RecordReplayTests {
    static let tag = "C0:FF:EE:00:00:07"

    /// The app under test: scan for the accelerometer, connect, discover, write `enable`,
    /// read the data, subscribe (indications: BlueZ delivers them as `Value` changes, which
    /// a bus recording holds; notifications through an acquired socket it cannot), take
    /// `count` samples (`whileSubscribed` makes the peripheral send them), disconnect.
    static func app(_ manager: CentralManager, enable: UInt8 = 1, count: Int,
                    whileSubscribed: @Sendable () -> Void = {}) async throws -> (address: String, read: Data?, samples: [Data], events: [ConnectionEvent]) {
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let found = Collector<Peripheral>()
        manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { found.append($0) }
        let p = try await found.wait(for: 1, timeout: .seconds(10))[0]
        manager.stopScanning()
        let link = Collector<ConnectionEvent>()
        p.connect(connectionTimeout: .seconds(5)).onSuccess(context: .immediate) { link.append($0.connectionEvent) }
        _ = try await link.wait(for: 1, timeout: .seconds(5))
        _ = try await p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(5)).value
        let service = try need(p.service(AccelerometerUUIDs.service), "accelerometer service")
        _ = try await service.discoverCharacteristics([AccelerometerUUIDs.data, AccelerometerUUIDs.enabled], timeout: .seconds(5)).value
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        let enabled = try need(service.characteristic(AccelerometerUUIDs.enabled), "enabled")
        _ = try await enabled.write(enable, timeout: .seconds(5)).value
        _ = try await data.read(timeout: .seconds(5)).value
        let read = data.value
        let samples = Collector<Data>()
        data.receiveNotificationUpdates(capacity: 50).onSuccess(context: .immediate) { if let d = $0.data { samples.append(d) } }
        _ = try await data.startNotifying(timeout: .seconds(5)).value
        whileSubscribed()
        let got = try await samples.wait(for: count, timeout: .seconds(10))
        p.disconnect()
        let events = try await link.wait(for: 2, timeout: .seconds(5))
        return (p.address, read, got, events)
    }

    /// Records `app` on a simulator with bluez-record `flags`; returns the app's result, the
    /// scenario and the recorder's stderr.
    static func record(_ flags: [String] = [], count: Int = 5) async throws
        -> (run: (address: String, read: Data?, samples: [Data], events: [ConnectionEvent]), scenario: BlueZScenario, stderr: String) {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(simulatedSensorTag(tag, dataFlags: [.read, .indicate]))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-record-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = try ExampleProcess("bluez-record", ["--bus", rig.bus.address, "--name", rig.client.uniqueName,
                                                           "--output", file.path] + flags, bus: rig.bus.address)
        _ = try await recorder.waitLine("recording") { $0 == "recording" }
        let simulator = rig.simulator
        let run = try await app(rig.manager, count: count) {
            for i in 0..<count {
                _ = simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([UInt8(i), 1, 2]))
            }
        }
        recorder.send(SIGINT)
        #expect(try await recorder.exitCode(within: .seconds(10)) == 0, "\(recorder.stderr)")
        return (run, try BlueZScenario(contentsOf: file), recorder.stderr)
    }

    @Test("A recording of scan, connect, write, read and indications replays to the same samples")
    func recordThenReplay() async throws {
        let recorded = try await Self.record()
        #expect(recorded.run.samples == (0..<5).map { Data([UInt8($0), 1, 2]) })
        #expect(recorded.stderr.contains("wrote "))
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: recorded.scenario)
        defer { replay.stop() }
        let manager = CentralManager(session: replay.session())
        defer { manager.reset() }
        let replayed = try await Self.app(manager, count: 5)
        #expect(replayed.address == recorded.run.address)
        #expect(replayed.read == recorded.run.read)
        #expect(replayed.samples == recorded.run.samples)
        #expect(replayed.events == recorded.run.events)
        let report = replay.report
        #expect(report.divergences.isEmpty, "\(report)")
        #expect(!report.unreached.contains { $0.event.isCall }, "\(report)")

        // The same recording against changed app code: another value written.
        let bus2 = try TestBus()
        defer { bus2.stop() }
        let replay2 = try await BlueZSimulator.start(busAddress: bus2.address, replaying: recorded.scenario)
        defer { replay2.stop() }
        let changed = CentralManager(session: replay2.session())
        defer { changed.reset() }
        await #expect(throws: (any Error).self) { try await Self.app(changed, enable: 2, count: 5) }
        let divergence = try #require(replay2.report.divergences.first)
        #expect(divergence.contains("expected /org/bluez/hci0/dev_C0_FF_EE_00_00_07/service"), "\(divergence)")
        #expect(divergence.contains("org.bluez.GattCharacteristic1.WriteValue([byte 1]"), "\(divergence)")
        #expect(divergence.contains("seen /org/bluez/hci0/dev_C0_FF_EE_00_00_07/service"), "\(divergence)")
        #expect(divergence.contains("org.bluez.GattCharacteristic1.WriteValue([byte 2]"), "\(divergence)")
    }

    @Test("--anonymize replaces the addresses everywhere, consistently; the recording still replays")
    func anonymized() async throws {
        let recorded = try await Self.record(["--anonymize"], count: 3)
        let text = recorded.scenario.text
        #expect(!text.contains("C0:FF:EE") && !text.contains("C0_FF_EE"))
        #expect(text.contains("dev_02_00_00_00_00_"))
        #expect(recorded.stderr.contains("addresses anonymized"))
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: recorded.scenario)
        defer { replay.stop() }
        let manager = CentralManager(session: replay.session())
        defer { manager.reset() }
        let replayed = try await Self.app(manager, count: 3)
        #expect(replayed.address.hasPrefix("02:00:00:00:00:"))
        #expect(replayed.samples == recorded.run.samples)
        #expect(replay.report.divergences.isEmpty, "\(replay.report)")
    }

    @Test("--max-bytes stops adding events at the bound and says so")
    func sizeBound() async throws {
        let recorded = try await Self.record(["--max-bytes", "6000"], count: 3)
        #expect(recorded.stderr.contains("the recording reached its size bound of 6000 bytes after"), "\(recorded.stderr)")
        #expect(recorded.stderr.contains("raise --max-bytes"))
        #expect(recorded.scenario.text.utf8.count <= 6000 + 2000)  // replies complete calls already recorded
        #expect(!recorded.scenario.events.isEmpty)
    }
}
