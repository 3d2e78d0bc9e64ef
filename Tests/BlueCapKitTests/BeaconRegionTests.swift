// iBeacon manufacturer data.

import Foundation
import Testing
@testable import BlueCapKit

@Suite("iBeacon region")
struct BeaconRegionTests {
    let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test("the payload is 02 15, the UUID, major and minor big-endian, then the Int8 power")
    func bytes() {
        let region = BeaconRegion(proximityUUID: uuid, identifier: "lobby", major: 0x0102, minor: 0xA0B0, measuredPower: -59)
        let expected: [UInt8] = [0x02, 0x15,
                                 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                 0x01, 0x02, 0xA0, 0xB0, 0xC5]
        #expect([UInt8](region.manufacturerData) == expected)
        #expect([UInt8](region.manufacturerSpecificData) == [0x4C, 0x00] + expected)
        #expect(region.manufacturerSpecificData.count == 25)
        #expect(BeaconRegion.appleCompanyIdentifier == 0x004C)
    }

    @Test("both payload forms decode back; other companies, types and lengths are rejected")
    func decode() {
        let region = BeaconRegion(proximityUUID: uuid, major: 65535, minor: 0, measuredPower: -128)
        #expect(BeaconRegion(manufacturerData: region.manufacturerData) == region)
        #expect(BeaconRegion(manufacturerSpecificData: region.manufacturerSpecificData) == region)
        #expect(BeaconRegion(manufacturerData: region.manufacturerData, companyIdentifier: 0x0059) == nil)
        #expect(BeaconRegion(manufacturerData: region.manufacturerData.dropLast()) == nil)
        #expect(BeaconRegion(manufacturerData: region.manufacturerData + [0]) == nil)
        var wrongType = [UInt8](region.manufacturerData); wrongType[0] = 0x03
        #expect(BeaconRegion(manufacturerData: Data(wrongType)) == nil)
        var wrongCompany = [UInt8](region.manufacturerSpecificData); wrongCompany[0] = 0x4D
        #expect(BeaconRegion(manufacturerSpecificData: Data(wrongCompany)) == nil)
        #expect(BeaconRegion(manufacturerSpecificData: Data()) == nil)
    }
}
