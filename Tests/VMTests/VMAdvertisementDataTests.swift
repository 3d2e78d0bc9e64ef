// Real BlueZ: what a scanner's bluetoothd reports of an advertisement (Device1.AdvertisingData,
// AdvertisingFlags, AddressType and the decoded fields) against what the advertiser on hci1
// registered. AdvertisingData and AdvertisingFlags are experimental up to 5.77: without -E on
// 5.55 and 5.66 they must read as absent. Part of RealBlueZTests, serialized with its other tests
// (suites run in parallel, and this one removes the peripheral's device object); test-vm's
// `vm-adapters` step runs it again with -E.

import BlueCapKit
import DBus
import Foundation
import Testing
import TestSupport

extension VM {
    /// Whether bluetoothd exports Device1.AdvertisingData/AdvertisingFlags: from 5.78 always,
    /// before only with `--experimental`.
    static let exportsAdvertisingData = experimental
        || !bluezVersion.split(separator: ".").compactMap { Int($0) }.lexicographicallyPrecedes([5, 78])
}

extension RealBlueZTests {
    static let adCompany: UInt16 = 0xFFFE
    static let adPayload: [UInt8] = [0xAD, 0x01, 0x02]
    static let adUUIDs: [BLEUUID] = ["180F", "181A"]
    /// Broadcast Name (0x30): a type bluetoothd does not decode, so it keeps it raw.
    static let adBroadcastName = Data("Hall".utf8)

    @Test("advertisement data: the central gets the advertiser's manufacturer structure, UUID list and raw 0x30, with flags and address type where exported",
          .timeLimit(.minutes(3)))
    func advertisementDataMatchesRegistration() async throws {
        let centralSession = BluetoothSession(), peripheralSession = BluetoothSession()
        let bus = try centralSession.testConnection()
        try await VM.settle(bus)
        let address = try await VM.address(bus, VM.peripheralAdapter)
        // A device object left by an earlier test would not be reported again (README lesson 12)
        // and would hold that test's data: start from none.
        await VM.forget(bus, address, on: [VM.centralAdapter])
        let peripheral = PeripheralManager(adapter: VM.peripheralAdapter, session: peripheralSession)
        let central = CentralManager(adapter: VM.centralAdapter, session: centralSession)
        do {
            let ad = try await Self.scanAdvertisement(peripheral, central, address)
            central.stopScanning()
            try Self.check(ad)
        } catch {
            central.stopScanning()
            await withDeadlineOrNil { _ = try? await peripheral.shutdown().value }
            await VM.forget(bus, address, on: [VM.centralAdapter])
            throw error
        }
        await withDeadlineOrNil { _ = try? await peripheral.shutdown().value }
        await VM.forget(bus, address, on: [VM.centralAdapter])
        try await VM.settle(bus)
    }

    /// Advertises from hci1 and returns the first advertisement hci0's scan reports for it.
    private static func scanAdvertisement(_ peripheral: PeripheralManager, _ central: CentralManager,
                                          _ address: String) async throws -> Advertisement {
        for try await state in peripheral.whenStateChanges().values where state == .poweredOn { break }
        try await central.whenPoweredOn(timeout: .seconds(15)).value
        try await withDeadline(.seconds(20), "advertise") {
            try await peripheral.startAdvertising(uuids: adUUIDs, manufacturerData: [adCompany: Data(adPayload)],
                                                  otherADStructures: [0x30: adBroadcastName]).value
        }
        let found = Collector<Advertisement>()
        central.startScanning().onSuccess(context: .immediate) { p in
            if p.address == address { found.append(p.advertisement) }
        }
        return try await found.wait(for: 1, timeout: .seconds(40))[0]
    }

    /// What the central must have got; prints (and writes to the run directory) what it got.
    private static func check(_ ad: Advertisement) throws {
        let raw = ad.advertisingData.map { "\($0.mapValues { $0.map { String(format: "%02x", $0) }.joined() })" } ?? "absent"
        let line = "BlueZ \(VM.bluezVersion)\(VM.experimental ? " -E" : ""): advertisingData=\(raw) "
            + "flags=\(ad.flags.map { "\($0)" } ?? "absent") addressType=\(ad.addressType?.rawValue ?? "absent")"
        print(line)
        try? (line + "\n").write(toFile: VM.logDirectory + "/advertisement-data.txt", atomically: true, encoding: .utf8)

        // Decoded by bluetoothd, re-encoded: exactly the advertiser's structures.
        #expect(ad.adStructures[0xFF] == [Data([UInt8(adCompany & 0xFF), UInt8(adCompany >> 8)] + adPayload)])
        let list = try #require(ad.adStructures[0x03]?.first)
        #expect(list.count == 4)
        let listed = Set(stride(from: 0, to: list.count - 1, by: 2).map { UInt16(list[$0]) | UInt16(list[$0 + 1]) << 8 })
        #expect(listed == [0x180F, 0x181A])
        #expect(ad.addressType == .public)
        if VM.exportsAdvertisingData {
            // Kept raw: the only structure bluetoothd does not decode.
            #expect(ad.advertisingData == [0x30: adBroadcastName])
            #expect(ad.adStructures[0x30] == [adBroadcastName])
            let flags = try #require(ad.flags)
            #expect(flags.contains(.leGeneralDiscoverable) || flags.contains(.leLimitedDiscoverable), "\(flags)")
            #expect(ad.adStructures[0x01] == [Data([flags.rawValue])])
        } else {
            #expect(ad.advertisingData == nil)
            #expect(ad.flags == nil)
            #expect(ad.adStructures[0x30] == nil)
        }
    }
}
