// ServiceModel changes carry the value: notified values overwritten before the app looks are
// still seen, in order; a model is Sendable and can be captured in a callback.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

extension ServiceModelBindingTests {
    @Test("changes carry each notified value, even when the property was overwritten before the app looked")
    func changesCarryValues() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let model = BatteryLevelModel()
        let binding = try await within(model.bind(to: try await service(h, "180F")), "bind")
        let changes = collect(binding.changes)
        for level: UInt8 in [41, 42, 43] {
            #expect(h.simulator.notify(peripheral: tag, characteristic: "2A19", value: Data([level])) == 1)
        }
        let seen = try await changes.wait(for: 3)
        #expect(seen.map { $0.value(as: UInt8.self) } == [41, 42, 43])
        #expect(seen.map(\.data) == [Data([41]), Data([42]), Data([43])])
        #expect(seen.allSatisfy { $0.uuid == "2A19" && $0.property == "level" })
        #expect(model.level == 43)
        #expect(seen[0].value(as: String.self) == nil, "the value has the property's type")
    }

    @Test("a ServiceModel is Sendable: captured in onSuccess and read from another task")
    func modelIsSendable() async throws {
        let model = BatteryLevelModel()
        let done = Promise<UInt8>()
        Future<Void>(value: ()).onSuccess(context: .futuresDefault) { _ in
            _ = try? model.update(uuid: "2A19", data: Data([77]))
            done.success(model.level)
        }
        #expect(try await done.future.value == 77)
        let fromTask = await Task.detached { model.level }.value
        #expect(fromTask == 77)
    }
}
