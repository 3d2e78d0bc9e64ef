// The peripheral role recorded and replayed: bluez-record records a GATT server app (its
// registration, bluetoothd's calls into it, its answers); the replay makes the same calls into
// the same app code in another process run, where the app's object paths differ, and names an
// answer that differs.
@_spi(Testing) import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("bluez-record, then replay: a GATT server", .serialized)
struct RecordReplayPeripheralTests {
    static let service: BLEUUID = "6e1c0100-5b4a-4c1e-9d3b-b1ec4b0e0001"
    static let level: BLEUUID = "6e1c0101-5b4a-4c1e-9d3b-b1ec4b0e0001"

    /// The app under test: serves one characteristic whose reads it answers itself with
    /// `answer`, advertises, and returns once it has answered `reads` reads.
    static func app(_ manager: PeripheralManager, answer: Data, reads: Int, afterServing: @Sendable () async throws -> Void = {}) async throws {
        let characteristic = MutableCharacteristic(uuid: level, properties: [.read], permissions: [.readable], value: Data([0]))
        let requests = collect(characteristic.startRespondingToReadRequests())
        for try await state in manager.whenStateChanges().values where state == .poweredOn { break }
        try await manager.add(MutableService(uuid: service, characteristics: [characteristic])).value
        try await manager.startAdvertising("replayed", uuids: [service]).value
        try await afterServing()
        for i in 0..<reads {
            let r = try await requests.wait(for: i + 1, timeout: .seconds(10))[i]
            characteristic.respondToRequest(r.request, withValue: answer)
        }
    }

    @Test("A GATT server's registration and a central's reads replay into the same app code under other object paths; a changed answer is named")
    func serverReplays() async throws {
        // Record: the server in one session, a central in another (not recorded).
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let serverSession = bus.session()
        let server = PeripheralManager(adapter: "hci1", session: serverSession)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-record-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = try ExampleProcess("bluez-record", ["--bus", bus.address, "--name", try need(serverSession.busConnection, "connection").uniqueName,
                                                           "--output", file.path], bus: bus.address)
        _ = try await recorder.waitLine("recording") { $0 == "recording" }
        let central = CentralManager(adapter: "hci0", session: bus.session())
        defer { central.reset() }
        let answer = Data([0x2A, 7])
        let read = Collector<Data>()
        try await Self.app(server, answer: answer, reads: 2) {
            Task {
                try await central.whenPoweredOn(timeout: .seconds(5)).value
                let found = Collector<Peripheral>()
                central.startScanning(forServiceUUIDs: [Self.service]).onSuccess(context: .immediate) { found.append($0) }
                let p = try await found.wait(for: 1, timeout: .seconds(10))[0]
                central.stopScanning()
                _ = try await p.connect(connectionTimeout: .seconds(5)).first().value
                _ = try await p.discoverServices([Self.service], timeout: .seconds(5)).value
                let s = try need(p.service(Self.service), "service")
                _ = try await s.discoverCharacteristics([Self.level], timeout: .seconds(5)).value
                let c = try need(s.characteristic(Self.level), "characteristic")
                for _ in 0..<2 { if let v = try await c.read(timeout: .seconds(5)).value.value { read.append(v) } }
            }
        }
        #expect(try await read.wait(for: 2, timeout: .seconds(10)) == [answer, answer])
        _ = try? await server.shutdown().value
        recorder.send(SIGINT)
        #expect(try await recorder.exitCode(within: .seconds(10)) == 0, "\(recorder.stderr)")
        let scenario = try BlueZScenario(contentsOf: file)

        // Replay into the same app code: another session, another PeripheralManager (its
        // object paths carry another counter), the same answers.
        let replayBus = try TestBus()
        defer { replayBus.stop() }
        let replay = try await BlueZSimulator.start(busAddress: replayBus.address, replaying: scenario)
        defer { replay.stop() }
        let replayed = PeripheralManager(adapter: "hci1", session: replay.session())
        #expect(replayed.applicationPath != server.applicationPath)
        try await Self.app(replayed, answer: answer, reads: 2)
        // A round trip after the answers: the replay has compared them by then.
        _ = try await replayed.advertisingCapabilities(timeout: .seconds(5)).value
        #expect(replay.report.divergences.isEmpty, "\(replay.report)")

        // The same recording, the app answering something else: the divergence is named.
        let changedBus = try TestBus()
        defer { changedBus.stop() }
        let replay2 = try await BlueZSimulator.start(busAddress: changedBus.address, replaying: scenario)
        defer { replay2.stop() }
        let changed = PeripheralManager(adapter: "hci1", session: replay2.session())
        try await Self.app(changed, answer: Data([0x2A, 8]), reads: 2)
        _ = try await changed.advertisingCapabilities(timeout: .seconds(5)).value
        let divergence = try #require(replay2.report.divergences.first, "\(replay2.report)")
        #expect(divergence.contains("the app answered") && divergence.contains("org.bluez.GattCharacteristic1.ReadValue"), "\(divergence)")
        #expect(divergence.contains("byte 8") && divergence.contains("byte 7"), "\(divergence)")
    }
}
