// Characteristic and service profiles, and ProfileManager lookups.

import Foundation
import Testing
@testable import BlueCapKit

@Suite("Profiles and ProfileManager")
struct ProfileManagerTests {
    @Test("services are found by short and long UUID forms")
    func serviceLookup() throws {
        let manager = ProfileManager()
        manager.registerBuiltInProfiles()
        let battery = try #require(manager.service("180F"))
        #expect(battery.name == "Battery Service" && battery.tag == "GATT")
        #expect(manager.service("0000180f-0000-1000-8000-00805F9B34FB")?.uuid == battery.uuid)
        #expect(manager.service("f000aa10-0451-4000-b000-000000000000")?.name == "TI Accelerometer")
        #expect(manager.service("FFFF") == nil)
        #expect(manager.services.count == TISensorTag.serviceProfiles.count + BLESIGGATT.serviceProfiles.count)
    }

    @Test("characteristics are found by UUID, with or without their service")
    func characteristicLookup() throws {
        let manager = ProfileManager()
        manager.registerBuiltInProfiles()
        let level = try #require(manager.characteristic("2A19"))
        #expect(level.name == "Battery Level" && level.properties == [.read, .notify])
        #expect(level.stringValue(Data([42])) == ["level": "42"])
        #expect(level.stringValue(Data([101])) == nil)
        #expect(level.data(fromString: ["level": "7"]) == Data([7]))
        let data = try #require(manager.characteristic("F000AA11-0451-4000-B000-000000000000", inService: "F000AA10-0451-4000-B000-000000000000"))
        #expect(data.stringValue(Data([0x40, 0, 0]))?["x"] == "-1.0")
        #expect(manager.characteristic("2A19", inService: "180A") == nil)
        #expect(manager.characteristic("2A29")?.stringValue(Data("TI".utf8)) == ["Manufacturer Name": "TI"])
        #expect(manager.services(containingCharacteristic: "2A19").map(\.uuid) == [BLEUUID(shortValue: 0x180F)])
    }

    @Test("replacing and removing services keeps the characteristic index consistent")
    func replaceAndRemove() {
        let manager = ProfileManager()
        var first = ServiceProfile(uuid: "1234", name: "First")
        first.addCharacteristic(CharacteristicProfile(uuid: "ABCD", name: "Old"))
        manager.addService(first)
        let second = ServiceProfile(uuid: "1234", name: "Second").adding(CharacteristicProfile(uuid: "BCDE", name: "New"))
        manager.addService(second)
        #expect(manager.services.map(\.name) == ["Second"])
        #expect(manager.characteristic("ABCD") == nil)
        #expect(manager.characteristic("BCDE")?.name == "New")
        #expect(manager.removeService("1234")?.name == "Second")
        #expect(manager.characteristic("BCDE") == nil)
        #expect(manager.removeService("1234") == nil)
    }

    @Test("an untyped profile shows values as hex and parses hex back")
    func untypedProfile() {
        let profile = CharacteristicProfile(uuid: "FFF1", name: "Vendor")
        #expect(profile.stringValue(Data([0xDE, 0xAD])) == ["value": "dead"])
        #expect(profile.data(fromString: ["value": "BEEF"]) == Data([0xBE, 0xEF]))
        #expect(profile.data(fromString: ["value": "B"]) == nil)
        #expect(profile.characteristicProfile.uuid == profile.uuid)
    }

    @Test("typed profiles decode, encode and carry their configuration")
    func typedProfiles() {
        let enabled = RawCharacteristicProfile<TISensorTag.AccelerometerService.Enabled>()
        #expect(enabled.value(from: Data([1])) == .yes)
        #expect(enabled.data(from: .no) == Data([0]))
        #expect(enabled.initialValue == Data([0]))
        #expect(throws: SerDeError.self) { try enabled.decode(Data([1, 1])) }
        let name = StringCharacteristicProfile<BLESIGGATT.DeviceInformationService.ModelNumber>()
        #expect(name.uuid == BLEUUID(shortValue: 0x2A24) && name.properties == [.read])
        #expect(name.value(from: Data("CC2541".utf8)) == "CC2541")
        #expect(name.data(fromString: ["Model Number": "X"]) == Data("X".utf8))
        var service = ConfiguredServiceProfile<BLESIGGATT.BatteryService>()
        #expect(service.characteristics.isEmpty && service.uuid == "180F")
        service.addCharacteristic(RawCharacteristicProfile<BLESIGGATT.BatteryService.Level>())
        service.addCharacteristic(RawCharacteristicProfile<BLESIGGATT.BatteryService.Level>())
        #expect(service.characteristics.count == 1)
    }

    @Test("concurrent registration and lookup from many tasks stays consistent")
    func concurrency() async {
        let manager = ProfileManager()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let uuid = BLEUUID(shortValue: UInt16(0x1000 + index))
                    manager.addService(ServiceProfile(uuid: uuid).adding(CharacteristicProfile(uuid: BLEUUID(shortValue: UInt16(0x8000 + index)))))
                    _ = manager.characteristic(BLEUUID(shortValue: UInt16(0x8000 + index)))
                }
            }
        }
        #expect(manager.services.count == 200)
        #expect(manager.characteristic(BLEUUID(shortValue: 0x8000 + 199), inService: BLEUUID(shortValue: 0x1000 + 199)) != nil)
    }
}
