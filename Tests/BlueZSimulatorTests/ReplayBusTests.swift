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
}
