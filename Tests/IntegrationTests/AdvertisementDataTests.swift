// Advertisement data through the public API: raw AD structures (Device1.AdvertisingData), flags
// (AdvertisingFlags) and address type, as each simulated BlueZ release exports them.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Advertisement data", .serialized, .timeLimit(.minutes(1)))
struct AdvertisementDataTests {
    static let address = "C0:FF:EE:00:00:AD"
    /// A BTHome-like sensor: service data for 0xFCD2, Ruuvi-like manufacturer data (0x0499), a
    /// Broadcast Name (0x30, a type bluetoothd keeps raw) and a random address.
    static let sensor = SimulatedPeripheral.spec(address: address)
        .name("Sensor").rssi(-50).txPower(-4).appearance(0x0341).addressType(.random)
        .advertising(uuids: ["180F", "F000AA10-0451-4000-B000-000000000000"])
        .manufacturerData(id: 0x0499, data: Data([0x05, 0x12, 0x34]))
        .serviceData(uuid: "FCD2", data: Data([0x40, 0x01, 0x64]))
        .adStructure(type: 0x30, data: Data("Kitchen".utf8))
        // Manufacturer data is decoded by bluetoothd, never kept raw: this one is ignored.
        .adStructure(type: 0xFF, data: Data([0xAA, 0xBB]))

    /// Scans until the sensor is reported and returns its advertisement.
    private func advertisement(profile: BlueZProfile, experimental: Bool = false) async throws -> Advertisement {
        let h = try await CentralRig.start(experimental: experimental, profile: profile)
        defer { h.stop() }
        h.simulator.add(Self.sensor)
        let found = Collector<Advertisement>()
        h.manager.startScanning().onSuccess(context: .immediate) { p in
            if p.address == Self.address { found.append(p.advertisement) }
        }
        return try await found.wait(for: 1)[0]
    }

    @Test("on 5.82 the scan reports the raw AD structures bluetoothd keeps, the flags and the address type")
    func testScan_WhenBlueZ582_ReportsRawFlagsAndAddressType() async throws {
        let ad = try await advertisement(profile: .bluez5_82)
        #expect(ad.advertisingData == [0x30: Data("Kitchen".utf8)])
        #expect(ad.flags == [.leGeneralDiscoverable, .brEdrNotSupported])
        #expect(ad.flags?.contains(.leLimitedDiscoverable) == false)
        #expect(ad.addressType == .random)
        let s = ad.adStructures
        #expect(s[0x30] == [Data("Kitchen".utf8)])
        #expect(s[0x01] == [Data([0x06])])
        #expect(s[0x16] == [Data([0xD2, 0xFC, 0x40, 0x01, 0x64])])
        #expect(s[0xFF] == [Data([0x99, 0x04, 0x05, 0x12, 0x34])])
        #expect(s[0x03] == [Data([0x0F, 0x18])])
        #expect(s[0x07] == [Data(BLEUUID("F000AA10-0451-4000-B000-000000000000").bigEndianBytes.reversed())])
        #expect(s[0x09] == [Data("Sensor".utf8)])
        #expect(s[0x0A] == [Data([0xFC])])
        #expect(s[0x19] == [Data([0x41, 0x03])])
    }

    @Test("on 5.66 and 5.55 without --experimental bluetoothd exports neither: the API says absent")
    func testScan_WhenExperimentalOff_ReportsAbsent() async throws {
        for profile in [BlueZProfile.bluez5_66, .bluez5_55] {
            let ad = try await advertisement(profile: profile)
            #expect(ad.advertisingData == nil, "\(profile)")
            #expect(ad.flags == nil, "\(profile)")
            #expect(ad.addressType == .random, "\(profile)")
            #expect(ad.adStructures[0x30] == nil && ad.adStructures[0x01] == nil, "\(profile)")
            // What bluetoothd decoded is still there, re-encoded.
            #expect(ad.adStructures[0x16] == [Data([0xD2, 0xFC, 0x40, 0x01, 0x64])], "\(profile)")
        }
    }

    @Test("on 5.66 and 5.55 with --experimental the raw structures and flags are there")
    func testScan_WhenExperimentalOn_ReportsRawAndFlags() async throws {
        for profile in [BlueZProfile.bluez5_66, .bluez5_55] {
            let ad = try await advertisement(profile: profile, experimental: true)
            #expect(ad.advertisingData == [0x30: Data("Kitchen".utf8)], "\(profile)")
            #expect(ad.flags?.rawValue == 0x06, "\(profile)")
        }
    }

    @Test("a peripheral advertising only decoded types has no AdvertisingData, and no flags when it sends none")
    func testScan_WhenNothingRaw_AdvertisingDataAbsent() async throws {
        let h = try await CentralRig.start(profile: .bluez5_82)
        defer { h.stop() }
        h.simulator.add(.spec(address: Self.address).name("Plain").flags(nil).manufacturerData(id: 0x000D, data: Data([1])))
        let found = Collector<Advertisement>()
        h.manager.startScanning().onSuccess(context: .immediate) { p in
            if p.address == Self.address { found.append(p.advertisement) }
        }
        let ad = try await found.wait(for: 1)[0]
        #expect(ad.advertisingData == nil)
        #expect(ad.flags == nil)
        #expect(ad.addressType == .public)
        #expect(ad.adStructures[0xFF] == [Data([0x0D, 0x00, 0x01])])
    }

    @Test("flags describe their bits by name")
    func testFlags_Description_NamesBits() {
        #expect(AdvertisingFlags(rawValue: 0x06).description == "[leGeneralDiscoverable, brEdrNotSupported]")
        #expect(AdvertisingFlags(rawValue: 0x21).description == "[leLimitedDiscoverable, reserved 0x20]")
    }
}

@Suite("Advertisement data between two apps", .serialized, .timeLimit(.minutes(1)))
struct AdvertisementDataPeripheralTests {
    @Test("a PeripheralManager's otherADStructures reach the central's advertisingData; a type bluetoothd owns is refused")
    func testAdvertise_WhenOtherADStructures_CentralGetsThemRaw() async throws {
        let h = try await CentralRig.start(adapters: 2, profile: .bluez5_82)
        defer { h.stop() }
        let peripheralSession = h.simulator.session()
        let peripheral = PeripheralManager(adapter: "hci1", session: peripheralSession)
        for try await state in peripheral.whenStateChanges().values where state == .poweredOn { break }
        await #expect(throws: (any Error).self) {
            try await peripheral.startAdvertising(manufacturerData: [0xFFFE: Data([1])], otherADStructures: [0x16: Data([1, 2])]).value
        }
        try await peripheral.startAdvertising(uuids: ["180F"], manufacturerData: [0xFFFE: Data([0xAD, 1])],
                                              otherADStructures: [0x30: Data("Hall".utf8)]).value
        let wanted = try #require(h.simulator.adapterAddress(1))
        let found = Collector<Advertisement>()
        h.manager.startScanning().onSuccess(context: .immediate) { p in
            if p.address == wanted { found.append(p.advertisement) }
        }
        let ad = try await found.wait(for: 1)[0]
        #expect(ad.advertisingData == [0x30: Data("Hall".utf8)])
        #expect(ad.adStructures[0xFF] == [Data([0xFE, 0xFF, 0xAD, 0x01])])
        #expect(ad.adStructures[0x03] == [Data([0x0F, 0x18])])
        #expect(ad.flags?.contains(.leGeneralDiscoverable) == true)
        #expect(ad.addressType == .public)
    }
}
