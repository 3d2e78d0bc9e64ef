// The seed's own forms compile and run with only what a user imports (BlueCapKit, and
// BlueZSimulator for tests): timeouts in seconds (`timeout: 10.0`), a ServiceModel captured in
// onSuccess, BusDaemon without `import DBus`, stopAdvertising()/removeAllServices() unused.
// This file must not import DBus, BlueZ, Futures or TestSupport: that is what it checks.

import BlueCapKit
import BlueZSimulator
import Foundation
import Testing

@Suite("Seed forms: what a BlueCap user writes compiles and runs", .serialized, .timeLimit(.minutes(1)))
struct SeedFormsTests {
    struct Battery: ServiceModel {
        @ServiceModel.Characteristic("2A19") var level: UInt8
        let serviceUUID: BLEUUID = "180F"
    }

    @Test("timeouts in seconds, a model captured in onSuccess, BusDaemon from BlueZSimulator, discardable results")
    func seedForms() async throws {
        let bus = try BusDaemon()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        simulator.add(SimulatedPeripheral.spec(address: "C0:FF:EE:00:00:09").name("Battery").rssi(-40)
            .advertising(uuids: ["180F"])
            .service("180F") { $0.characteristic("2A19", flags: [.read, .notify], value: Data([64])) })

        // Peripheral role: the results of stopAdvertising/removeAllServices may go unused.
        let peripheralManager = PeripheralManager(adapter: "hci1", session: BluetoothSession(bus: .address(bus.address)))
        _ = try await peripheralManager.whenStateChanges().withFilter { $0 == .poweredOn }.first().value
        peripheralManager.stopAdvertising()
        peripheralManager.removeAllServices()

        // Central role, with the seed's `TimeInterval` timeouts.
        let manager = CentralManager(adapter: "hci0", session: BluetoothSession(bus: .address(bus.address)))
        defer { manager.reset() }
        try await manager.whenPoweredOn(timeout: 10.0).value
        let peripheral = try await manager.startScanning(forServiceUUIDs: ["180F"], timeout: 10.0).first().value
        manager.stopScanning()
        _ = try await peripheral.connect(timeoutRetries: 2, connectionTimeout: 10.0)
            .withFilter { $0.connectionEvent == .connect }.first().value
        _ = try await peripheral.discoverServices(["180F"], timeout: 10.0).value
        let service = try #require(peripheral.service("180F"))
        _ = try await service.discoverCharacteristics(["2A19"], timeout: 10.0).value
        let level = try #require(service.characteristic("2A19"))
        _ = try await level.read(timeout: 10.0).value
        #expect(level.value == Data([64]))

        // A model captured by a callback (it is Sendable).
        let model = Battery()
        let seen = Promise<UInt8>()
        level.read(timeout: 5).onSuccess { characteristic in
            _ = try? model.update(uuid: "2A19", data: characteristic.value ?? Data())
            seen.success(model.level)
        }
        #expect(try await seen.future.value == 64)
        peripheral.disconnect()
        _ = try? await peripheralManager.shutdown().value
    }
}
