// ServiceModel bound to simulated remote services: reads, notifications, writes, transformers, missing characteristics.
import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

/// The Battery service's level.
struct BatteryLevelModel: ServiceModel {
    @ServiceModel.Characteristic("2A19") var level: UInt8
    let serviceUUID: BLEUUID = "180F"
}

/// The Battery service with a property the simulated service lacks, and an optional one it lacks too.
struct BatteryWithManufacturerModel: ServiceModel {
    @ServiceModel.Characteristic("2A19") var level: UInt8
    @ServiceModel.Characteristic("2A29") var manufacturer: String
    let serviceUUID: BLEUUID = "180F"
}

/// The Battery service, the level seen as a fraction, and an optional name the service lacks.
struct BatteryFractionModel: ServiceModel {
    @ServiceModel.Characteristic(wrappedValue: 0, "2A19", transformer: PercentTransformer()) var fraction: Double
    @ServiceModel.Characteristic("2A29") var manufacturer: String?
    let serviceUUID: BLEUUID = "180F"
}

/// A percentage byte (0…100) as a fraction 0…1.
struct PercentTransformer: CharacteristicTransformer {
    func value(from data: Data) throws(SerDeError) -> Double { Double(try UInt8(deserializing: data)) / 100 }
    func data(from value: Double) -> Data { Data([UInt8((value * 100).rounded())]) }
}

/// A vendor service: a writable target, a command characteristic.
struct ThermostatModel: ServiceModel {
    @ServiceModel.Characteristic("FFE1") var target: UInt16
    @ServiceModel.Characteristic("FFE3") var command: UInt8
    let serviceUUID: BLEUUID = "FFE0"
}

private let batteryLevel = "2A19"

/// A future's value, failing after `timeout`.
func within<T: Sendable>(_ future: Future<T>, _ what: String, timeout: Duration = .seconds(5)) async throws -> T {
    try await withDeadline(timeout, what) { try await future.value }
}

@Suite("ServiceModel binding", .serialized, .timeLimit(.minutes(1)))
struct ServiceModelBindingTests {
    let tag = "C0:FF:EE:00:00:07"

    /// A SensorTag that also has a Battery service (level 87, read + notify + write) and a vendor service.
    func peripheral() -> SimulatedPeripheral {
        simulatedSensorTag(tag)
            .service("180F") { $0.characteristic(batteryLevel, flags: [.read, .notify, .write], value: Data([87])) }
            .service("FFE0") {
                $0.characteristic("FFE1", flags: [.read, .write], value: Data([0x10, 0x00]))
                $0.characteristic("FFE3", flags: [.writeWithoutResponse], value: Data())
            }
    }

    /// Connects to the simulated peripheral and discovers `uuid`.
    func service(_ h: CentralRig, _ uuid: BLEUUID) async throws -> Service {
        h.simulator.add(peripheral())
        let (p, _, _) = try await h.ready(tag)
        _ = try await within(p.discoverServices([uuid]), "discoverServices")
        return try need(p.service(uuid), "service \(uuid)")
    }

    @Test("readAll sets the property from the peripheral's value and emits the change")
    func readAllSetsProperty() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = BatteryLevelModel()
        let binding = try await within(model.bind(to: try await service(h, "180F")), "bind")
        let changes = collect(binding.changes)
        #expect(model.level == 0 && !model.$level.hasReceivedValue)
        let read = try await within(model.readAll(), "readAll")
        #expect(read == ["2A19"])
        #expect(model.level == 87 && model.$level.hasReceivedValue)
        #expect(try await changes.wait(for: 1).map(\.uuid) == ["2A19"])
        #expect(binding.notifyingUUIDs == ["2A19"])
        #expect(model.serviceBinding === binding)
    }

    @Test("a notification sets the property and emits a change; unbinding stops notifications")
    func notificationUpdatesProperty() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = BatteryLevelModel()
        let service = try await service(h, "180F")
        let binding = try await within(model.bind(to: service), "bind")
        let seen = Collector<UInt8>()
        let level = model.$level
        binding.changes.onSuccess(context: .immediate) { _ in seen.append(level.wrappedValue) }
        #expect(h.simulator.notify(peripheral: tag, characteristic: batteryLevel, value: Data([42])) == 1)
        #expect(try await seen.wait(for: 1) == [42])
        #expect(model.level == 42)
        let remote = try need(service.characteristic("2A19"))
        #expect(remote.isNotifying)
        let stopped = try await within(model.unbind(), "unbind")
        #expect(stopped == ["2A19"])
        #expect(!remote.isNotifying && !binding.isBound && binding.changes.isFinished)
        #expect(model.serviceBinding == nil)
        let afterUnbind = model.readAll()
        await #expect(throws: PeripheralError.self) { try await afterUnbind.value }
    }

    @Test("a malformed notification is ignored: the property keeps its value, the next one applies")
    func malformedNotificationIgnored() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = BatteryLevelModel()
        let binding = try await within(model.bind(to: try await service(h, "180F")), "bind")
        _ = try await within(model.readAll(), "readAll")
        let seen = Collector<UInt8>()
        let level = model.$level
        binding.changes.onSuccess(context: .immediate) { _ in seen.append(level.wrappedValue) }
        #expect(try await seen.wait(for: 1) == [87], "the read's change, replayed")
        #expect(h.simulator.notify(peripheral: tag, characteristic: batteryLevel, value: Data([1, 2])) == 1)
        #expect(h.simulator.notify(peripheral: tag, characteristic: batteryLevel, value: Data([9])) == 1)
        #expect(try await seen.wait(for: 2) == [87, 9])
        #expect(binding.ignoredUpdateCount == 1)
        #expect(model.level == 9)
    }

    @Test("writes from the model reach the peripheral, with or without response per the characteristic")
    func writeReachesPeripheral() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = ThermostatModel()
        let binding = try await model.bind(to: try await service(h, "FFE0")).value
        #expect(binding.notifyingUUIDs.isEmpty)
        _ = try await within(model.write(model.$target, 0x1234), "write")
        #expect(model.target == 0x1234)
        #expect(h.simulator.value(peripheral: tag, characteristic: "FFE1") == Data([0x34, 0x12]))
        model.target = 0x0201
        _ = try await within(model.write(uuid: "FFE1"), "write uuid")
        #expect(h.simulator.value(peripheral: tag, characteristic: "FFE1") == Data([0x01, 0x02]))
        // FFE3 has only "write-without-response": the model picks WriteValue type "command".
        _ = try await within(model.write(model.$command, 7), "write command")
        #expect(h.simulator.value(peripheral: tag, characteristic: "FFE3") == Data([7]))
        model.target = 0
        #expect(try await within(model.readAll(), "readAll") == ["FFE1"], "FFE3 is not readable")
        #expect(model.target == 0x0201, "read back what was written")
    }

    @Test("a custom transformer decodes reads and notifications and encodes writes; a missing optional is skipped")
    func customTransformer() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = BatteryFractionModel()
        let binding = try await within(model.bind(to: try await service(h, "180F")), "bind")
        #expect(binding.skipped == ["2A29"] && model.manufacturer == nil)
        _ = try await within(model.readAll(), "readAll")
        #expect(model.fraction == 0.87)
        let changes = collect(binding.changes)
        #expect(h.simulator.notify(peripheral: tag, characteristic: batteryLevel, value: Data([50])) == 1)
        try await changes.wait(for: 2)
        #expect(model.fraction == 0.5)
        _ = try await within(model.write(model.$fraction, 0.25), "write")
        #expect(h.simulator.value(peripheral: tag, characteristic: batteryLevel) == Data([25]))
        #expect(model.fraction == 0.25)
    }

    @Test("a missing required characteristic fails binding with notFound naming its UUID and property")
    func missingCharacteristic() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = BatteryWithManufacturerModel()
        let service = try await service(h, "180F")
        let bind = model.bind(to: service)
        let error = await #expect(throws: PeripheralError.self) { try await within(bind, "bind") }
        #expect(error?.kind == .notFound)
        #expect(error?.message.contains("2A29 (BatteryWithManufacturerModel.manufacturer)") == true, "\(String(describing: error))")
        #expect(model.serviceBinding == nil)
        #expect(service.characteristic("2A19")?.isNotifying == false, "nothing was started")
        let bindWrong = ThermostatModel().bind(to: service)
        let wrongService = await #expect(throws: PeripheralError.self) { try await within(bindWrong, "bind") }
        #expect(wrongService?.kind == .notSupported)
    }
}
