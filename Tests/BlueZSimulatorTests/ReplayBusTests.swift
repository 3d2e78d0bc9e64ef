// Replaying recorded BlueZ traffic against CentralManager: the app's calls answered in order,
// signals at their offsets, divergences named, unreached events reported.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Replay of a recorded scenario", .serialized)
struct ReplayBusTests {
    static let tag = "C0:FF:EE:00:00:01"

    static func scenario(_ name: String) throws -> BlueZScenario {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scenarios/\(name).bluez.jsonl")
        return try BlueZScenario(contentsOf: url)
    }

    @Test("Scan, connect, discover, read and notify replayed against CentralManager")
    func centralFollowsRecording() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: try Self.scenario("central-small"))
        defer { replay.stop() }
        let manager = CentralManager(session: replay.session())
        defer { manager.reset() }
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let found = Collector<Peripheral>()
        manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service])
            .onSuccess(context: .immediate) { found.append($0) }
        let p = try await found.wait(for: 1, timeout: .seconds(5))[0]
        #expect(p.address == Self.tag)
        manager.stopScanning()
        let link = Collector<ConnectionEvent>()
        p.connect(connectionTimeout: .seconds(5)).onSuccess(context: .immediate) { link.append($0.connectionEvent) }
        #expect(try await link.wait(for: 1, timeout: .seconds(5)) == [.connect])
        _ = try await p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(5)).value
        let service = try need(p.service(AccelerometerUUIDs.service), "accelerometer service")
        _ = try await service.discoverCharacteristics([AccelerometerUUIDs.data], timeout: .seconds(5)).value
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data characteristic")
        _ = try await data.read(timeout: .seconds(5)).value
        #expect(data.value == Data([0, 0, 64]))
        let samples = Collector<Data>()
        data.receiveNotificationUpdates(capacity: 10).onSuccess(context: .immediate) { if let d = $0.data { samples.append(d) } }
        _ = try await data.startNotifying(timeout: .seconds(5)).value
        let got = try await samples.wait(for: 3, timeout: .seconds(5))
        #expect(got == [Data([1, 2, 3]), Data([4, 5, 6]), Data([7, 8, 9])], "\(got.map { [UInt8]($0) })")
        #expect(replay.report.isComplete, "\(replay.report)")
    }

    /// The scenario's start: powered on and scanning, the SensorTag found, connected.
    static func connected(_ manager: CentralManager) async throws -> Peripheral {
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let found = Collector<Peripheral>()
        manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { found.append($0) }
        let p = try await found.wait(for: 1, timeout: .seconds(5))[0]
        manager.stopScanning()
        _ = try await p.connect(connectionTimeout: .seconds(5)).first().value
        _ = try await p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(5)).value
        return p
    }

    @Test("A call the recording does not have fails naming the call expected and the call seen")
    func divergentCallFails() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: try Self.scenario("central-small"))
        defer { replay.stop() }
        let manager = CentralManager(session: replay.session())
        defer { manager.reset() }
        let p = try await Self.connected(manager)
        let service = try need(p.service(AccelerometerUUIDs.service), "accelerometer service")
        _ = try await service.discoverCharacteristics([AccelerometerUUIDs.enabled], timeout: .seconds(5)).value
        let enabled = try need(service.characteristic(AccelerometerUUIDs.enabled), "enabled characteristic")
        // The recording reads the data characteristic (char0011); this app reads "enabled" (char0014).
        let error = await #expect(throws: BlueCapError.self) { try await enabled.read(timeout: .seconds(5)).value }
        let expected = "expected /org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011 org.bluez.GattCharacteristic1.ReadValue({})"
        let seen = "seen /org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0014 org.bluez.GattCharacteristic1.ReadValue({})"
        #expect("\(error.map { "\($0)" } ?? "")".contains(expected))
        let report = replay.report
        #expect(report.divergences.count == 1)
        #expect(report.divergences.first?.contains(expected) == true)
        #expect(report.divergences.first?.contains(seen) == true)
        #expect(!report.isComplete)
    }

    @Test("What the app never reached is reported: its calls, BlueZ's signals after them")
    func unreachedReported() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: try Self.scenario("central-small"))
        defer { replay.stop() }
        let manager = CentralManager(session: replay.session())
        defer { manager.reset() }
        _ = try await Self.connected(manager)
        let report = replay.report
        #expect(report.divergences.isEmpty)
        // Events 14 on (the read, the notifications) were never reached; the scan, connection
        // and service discovery were.
        #expect(report.unreached.map(\.position) == Array(14...21))
        #expect(report.description.contains("event 14 (call of the app never made): /org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011 org.bluez.GattCharacteristic1.ReadValue({})"))
        #expect(report.description.contains("event 19 (signal never sent)"))
    }

    @Test("Signals go out at their recorded offsets on the session's manual clock")
    func signalsOnManualClock() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let clock = ManualClock()
        let replay = try await BlueZSimulator.start(busAddress: bus.address, replaying: try Self.scenario("central-small"), clock: clock)
        defer { replay.stop() }
        let manager = CentralManager(session: replay.session(clock: clock))
        defer { manager.reset() }
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let found = Collector<Peripheral>()
        manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { found.append($0) }
        // StartDiscovery answered: the device (recorded 245 ms after its reply) waits on the clock.
        await clock.waitForPending(atLeast: 1)
        #expect(replay.report.unreached.first?.position == 4)
        clock.advance(by: .milliseconds(200))
        #expect(replay.report.unreached.first?.position == 4)
        #expect(found.items.isEmpty)
        clock.advance(by: .milliseconds(50))
        let p = try await found.wait(for: 1, timeout: .seconds(5))[0]
        #expect(p.address == Self.tag)
        // Next: event 5, StopDiscovery (unordered: optional, so not reported), then event 6.
        #expect(replay.report.unreached.first?.position == 6)
    }
}
