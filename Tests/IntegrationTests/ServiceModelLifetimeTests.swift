// ServiceModel as a checked-Sendable struct: copies share values and binding; the binding lives as long as the model.
import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

/// A model as the README declares one: a struct, nothing restated for `Sendable`.
struct PlainBatteryModel: ServiceModel {
    let serviceUUID: BLEUUID = "180F"
    @ServiceModel.Characteristic("2A19") var level: UInt8
}

@Suite("ServiceModel lifetime", .serialized, .timeLimit(.minutes(1)))
struct ServiceModelLifetimeTests {
    let tag = "C0:FF:EE:00:00:08"

    func service(_ h: CentralRig) async throws -> Service {
        h.simulator.add(simulatedSensorTag(tag)
            .service("180F") { $0.characteristic("2A19", flags: [.read, .notify], value: Data([87])) })
        let (p, _, _) = try await h.ready(tag)
        _ = try await within(p.discoverServices(["180F"]), "discoverServices")
        return try need(p.service("180F"), "service 180F")
    }

    @Test("a struct model crosses tasks without annotations; its copies share values and the binding")
    func copiesShareValuesAndBinding() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = PlainBatteryModel()
        let copy = model
        _ = try await within(model.bind(to: try await service(h)), "bind")
        #expect(copy.serviceBinding === model.serviceBinding && copy.serviceBinding != nil)
        // Set from another task on a `let` copy; read here.
        await Task.detached { copy.level = 12 }.value
        #expect(model.level == 12)
        let binding = try need(model.serviceBinding, "binding")
        let seen = Collector<UInt8>()
        binding.changes.onSuccess(context: .immediate) { _ in seen.append(copy.level) }
        #expect(h.simulator.notify(peripheral: tag, characteristic: "2A19", value: Data([42])) == 1)
        #expect(try await seen.wait(for: 1) == [42])
        #expect(model.level == 42 && copy.level == 42)
    }

    @Test("the binding lives as long as the model: the handle may be dropped; dropping the model releases it")
    func bindingLivesWithTheModel() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let service = try await service(h)
        weak var released: ServiceModelBinding?
        weak var box: ServiceModelCharacteristic<UInt8>?
        do {
            let model = PlainBatteryModel()
            _ = try await within(model.bind(to: service), "bind")  // the handle is dropped at once
            let binding = try need(model.serviceBinding, "binding kept by the model")
            released = binding
            box = model.$level
            let seen = Collector<UInt8>()
            // The callback must not capture the model: the binding (through its changes stream)
            // would then keep the model, and the model the binding, until unbind().
            binding.changes.onSuccess(context: .immediate) { seen.append($0.value(as: UInt8.self) ?? 0) }
            #expect(h.simulator.notify(peripheral: tag, characteristic: "2A19", value: Data([7])) == 1)
            #expect(try await seen.wait(for: 1) == [7])
            #expect(model.level == 7)
        }
        #expect(box == nil, "the model outlived its scope")
        #expect(released == nil, "a binding outlived its model")
    }

    @Test("a model without properties cannot bind, and says why")
    func modelWithoutPropertiesFails() async throws {
        struct Empty: ServiceModel { let serviceUUID: BLEUUID = "180F" }
        let h = try await CentralRig.start()
        defer { h.stop() }
        let bound = Empty().bind(to: try await service(h))
        do {
            _ = try await within(bound, "bind")
            Issue.record("a model without properties bound")
        } catch let error as PeripheralError {
            #expect(error.kind == .notSupported && error.message.contains("@ServiceModel.Characteristic"), "\(error)")
        }
    }
}
