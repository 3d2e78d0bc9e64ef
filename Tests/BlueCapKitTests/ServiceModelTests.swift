// ServiceModel bindings driven by plain Data.

import Foundation
import Testing
@testable import BlueCapKit

struct BatteryModel: ServiceModel {
    @ServiceModel.Characteristic("2A19") var batteryLevel: UInt8
    @ServiceModel.Characteristic("2A29") var manufacturer: String
    @ServiceModel.Characteristic("2A38") var location: BLESIGGATT.HeartRateService.BodySensorLocation?
    @ServiceModel.Characteristic(wrappedValue: TISensorTag.AccelerometerService.Enabled.no, "F000AA12-0451-4000-B000-000000000000")
    var enabled: TISensorTag.AccelerometerService.Enabled

    let serviceUUID: BLEUUID = "180F"
}

@Suite("ServiceModel")
struct ServiceModelTests {
    @Test("bindings are enumerated by reflection with their UUIDs")
    func bindings() {
        let model = BatteryModel()
        #expect(Set(model.characteristicUUIDs) == Set<BLEUUID>(["2A19", "2A29", "2A38", "F000AA12-0451-4000-B000-000000000000"]))
        #expect(model.serviceUUID == "180F")
        #expect(model.$batteryLevel.uuid == "2A19")
        #expect(model.$location.isOptional && !model.$batteryLevel.isOptional && !model.$manufacturer.isOptional)
    }

    @Test("update(uuid:data:) decodes into the matching property and reports unknown UUIDs")
    func update() throws {
        let model = BatteryModel()
        #expect(model.batteryLevel == 0 && !model.$batteryLevel.hasReceivedValue)
        #expect(try model.update(uuid: "00002a19-0000-1000-8000-00805f9b34fb", data: Data([87])))
        #expect(model.batteryLevel == 87 && model.$batteryLevel.hasReceivedValue)
        #expect(try model.update(uuid: "2A29", data: Data("Texas Instruments".utf8)))
        #expect(model.manufacturer == "Texas Instruments")
        #expect(model.location == nil)
        try model.update(uuid: "2A38", data: Data([2]))
        #expect(model.location == .wrist)
        try model.update(uuid: "F000AA12-0451-4000-B000-000000000000", data: Data([1]))
        #expect(model.enabled == .yes)
        #expect(try model.update(uuid: "2A00", data: Data([1])) == false)
    }

    @Test("undecodable data throws and leaves the property unchanged")
    func badData() throws {
        let model = BatteryModel()
        try model.update(uuid: "2A19", data: Data([5]))
        #expect(throws: SerDeError.wrongLength(type: "UInt8", expected: 1, actual: 2, atLeast: false)) {
            try model.update(uuid: "2A19", data: Data([1, 2]))
        }
        #expect(model.batteryLevel == 5)
        #expect(throws: SerDeError.self) { try model.update(uuid: "2A38", data: Data([99])) }
        #expect(model.location == nil)
    }

    @Test("data(for:) encodes the current property value for writing")
    func dataForWrite() {
        let model = BatteryModel()
        model.enabled = .yes
        model.batteryLevel = 12
        #expect(model.data(for: "F000AA12-0451-4000-B000-000000000000") == Data([1]))
        #expect(model.data(for: "2A19") == Data([12]))
        #expect(model.data(for: "2A38") == Data())
        #expect(model.data(for: "2A00") == nil)
    }
}
