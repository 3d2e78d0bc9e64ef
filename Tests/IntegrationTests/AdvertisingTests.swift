// Advertising through the public API: the adapter's capabilities per BlueZ release, every
// LEAdvertisement1 property reaching a scanner, validation naming the limit it hit, and several
// advertisements at once up to the controller's instances.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Advertising: capabilities, properties, validation, instances", .serialized, .timeLimit(.minutes(1)))
struct AdvertisingTests {
    /// A central on hci0 (the rig's) and a PeripheralManager on hci1, powered.
    private func rig(_ profile: BlueZProfile, experimental: Bool = false) async throws -> (CentralRig, PeripheralManager) {
        let h = try await CentralRig.start(adapters: 2, experimental: experimental, profile: profile)
        let peripheral = PeripheralManager(adapter: "hci1", session: h.simulator.session())
        do { try await peripheral.whenPoweredOn(timeout: .seconds(5)).value } catch {
            h.stop()
            throw error
        }
        return (h, peripheral)
    }

    private func scan(_ h: CentralRig, where matches: @escaping @Sendable (Advertisement) -> Bool = { _ in true }) async throws -> Advertisement {
        let wanted = try #require(h.simulator.adapterAddress(1))
        let found = Collector<Advertisement>()
        h.manager.startScanning().onSuccess(context: .immediate) { p in
            if p.address == wanted, matches(p.advertisement) { found.append(p.advertisement) }
        }
        defer { h.manager.stopScanning() }
        return try await found.wait(for: 1)[0]
    }

    private func failure(_ future: Future<some Sendable>) async -> BlueCapError? {
        do { _ = try await future.value } catch let error as BlueCapError { return error } catch { return nil }
        return nil
    }

    // MARK: Capabilities

    @Test("capabilities: 5.55 has no features or lengths, 5.66 only with --experimental, 5.82 always; instances count down")
    func testCapabilities_PerRelease_AbsentAsNil() async throws {
        let cases: [(BlueZProfile, Bool, Bool)] = [(.bluez5_55, false, false), (.bluez5_55, true, false), (.bluez5_66, false, false),
                                                    (.bluez5_66, true, true), (.bluez5_82, false, true)]
        for (profile, experimental, reported) in cases {
            let (h, peripheral) = try await rig(profile, experimental: experimental)
            defer { h.stop() }
            let caps = try await peripheral.advertisingCapabilities().value
            let label = "\(profile) experimental \(experimental)"
            #expect(caps.availableInstances == 5 && caps.activeInstances == 0, "\(label)")
            #expect(caps.supportedIncludes?.contains("tx-power") == true, "\(label)")
            #expect(caps.supportedSecondaryChannels == nil, "\(label): a legacy controller exports no secondary channels")
            #expect((caps.maxAdvertisingDataLength == 31) == reported, "\(label)")
            #expect((caps.supportedFeatures != nil) == reported, "\(label)")
            #expect(caps.advertisingDataLimit == 31, "\(label)")
            try await peripheral.startAdvertising("Counted").value
            let after = try await peripheral.advertisingCapabilities().value
            #expect(after.availableInstances == 4 && after.activeInstances == 1 && after.totalInstances == 5, "\(label)")
        }
    }

    // MARK: Properties seen by a scanner

    @Test("service data, appearance, manufacturer data, UUIDs and name reach the central on hci0")
    func testAdvertise_WhenEveryProperty_CentralSeesThem() async throws {
        let (h, peripheral) = try await rig(.bluez5_82)
        defer { h.stop() }
        var ad = LocalAdvertisement(type: .peripheral, serviceUUIDs: ["180F"], localName: "Every",
                                    manufacturerData: [0xFFFE: Data([7])], serviceData: ["FCD2": Data([0x40, 1])],
                                    includes: [], appearance: 0x0341, data: [0x30: Data("H".utf8)])
        ad.solicitUUIDs = ["1812"]
        ad.duration = 2
        ad.timeout = 600
        ad.minInterval = 100
        ad.maxInterval = 200
        try await peripheral.startAdvertising(ad).value
        let seen = try await scan(h) { $0.localName == "Every" }
        #expect(seen.serviceUUIDs == [BLEUUID("180F")])
        #expect(seen.serviceData == [BLEUUID("FCD2"): Data([0x40, 1])])
        #expect(seen.manufacturerData == [0xFFFE: Data([7])])
        #expect(seen.appearance == 0x0341)
        #expect(seen.advertisingData == [0x30: Data("H".utf8)])
    }

    // MARK: Validation

    @Test("too much advertising data fails before bluetoothd, naming the 31-byte limit; MaxAdvLen raises it")
    func testValidate_WhenTooLong_NamesTheLimit() async throws {
        let (h, peripheral) = try await rig(.bluez5_82)
        defer { h.stop() }
        let long = LocalAdvertisement(manufacturerData: [0xFFFE: Data(repeating: 1, count: 30)], includes: [])
        #expect(long.advertisingDataLength == 3 + 4 + 30)
        let error = try #require(await failure(peripheral.startAdvertising(long)))
        #expect(error.kind == .invalidArguments)
        #expect(error.message.contains("37 bytes") && error.message.contains("31 bytes"), "\(error)")
        #expect(error.operation.contains("RegisterAdvertisement"))
        #expect(try await peripheral.advertisingCapabilities().value.activeInstances == 0)
        // A controller with extended advertising reports 251 bytes: the same advertisement fits.
        h.simulator.sync { $0.setAdvertisingController(maxDataLength: 251) }
        try await peripheral.startAdvertising(long).value
        #expect(peripheral.isAdvertising)
    }

    @Test("intervals, discoverable timeout, TX power, name and include, includes and secondary channels are checked with the rule named")
    func testValidate_WhenRuleBroken_MessageNamesIt() async throws {
        let (h, peripheral) = try await rig(.bluez5_82)
        defer { h.stop() }
        func message(_ change: (inout LocalAdvertisement) -> Void) async -> String {
            var ad = LocalAdvertisement(localName: "Rules")
            change(&ad)
            return await failure(peripheral.startAdvertising(ad))?.message ?? "accepted"
        }
        #expect(await message { $0.minInterval = 200; $0.maxInterval = 100 }.contains("MinInterval (200 ms) is above MaxInterval (100 ms)"))
        #expect(await message { $0.minInterval = 10; $0.maxInterval = 100 }.contains("MinInterval 10 ms is outside 20"))
        #expect(await message { $0.minInterval = 100 }.contains("only one of MinInterval and MaxInterval"))
        #expect(await message { $0.discoverable = nil; $0.discoverableTimeout = 30 }.contains("Discoverable is not true"))
        #expect(await message { $0.discoverableTimeout = 60; $0.timeout = 30 }.contains("longer than Timeout"))
        #expect(await message { $0.txPower = 30 }.contains("TxPower 30 dBm"))
        #expect(await message { $0.includes = ["local-name"] }.contains("Local name already included"))
        #expect(await message { $0.includes = ["rsi"] }.contains("SupportedIncludes"))
        // bluetoothd shortens a long name (Shortened Local Name): no failure.
        #expect(await message { $0.localName = String(repeating: "n", count: 40) } == "accepted")
        let secondary = await failure(peripheral.startAdvertising(LocalAdvertisement(localName: "Coded", secondaryChannel: .coded)))
        #expect(secondary?.kind == .notSupported)
        #expect(secondary?.message.contains("no extended advertising") == true)
        #expect(await message { $0.minInterval = 100; $0.maxInterval = 200; $0.discoverableTimeout = 10; $0.timeout = 60 } == "accepted")
        h.simulator.sync { $0.setAdvertisingController(secondaryChannels: ["1M", "Coded"]) }
        try await peripheral.startAdvertising(LocalAdvertisement(localName: "Coded", secondaryChannel: .coded)).value
    }

    @Test("the simulator refuses what bluetoothd refuses, per release: 5.82 checks intervals, 5.66 without -E ignores them")
    func testSimulator_WhenIntervalsReversed_PerRelease() async throws {
        var ad = LocalAdvertisement(localName: "Raw")
        ad.minInterval = 200
        ad.maxInterval = 100
        for (profile, refused) in [(BlueZProfile.bluez5_82, true), (.bluez5_66, false)] {
            let (h, peripheral) = try await rig(profile)
            defer { h.stop() }
            // Straight to the simulator, past the library's own check.
            let result = h.simulator.sync { core -> Bool in
                var data = LEAdvertisementData()
                data.localName = ad.localName
                data.minInterval = ad.minInterval
                data.maxInterval = ad.maxInterval
                return (try? core.registerAdvertisement(adapter: 1, owner: ":1.999", path: "/raw", data)) != nil
            }
            #expect(result != refused, "\(profile)")
            _ = peripheral
        }
    }

    // MARK: Instances

    @Test("several advertisements at once up to the instances; past them a clear error; a stopped one frees its instance")
    func testInstances_UpToTheController_ThenNamedError() async throws {
        let (h, peripheral) = try await rig(.bluez5_66)
        defer { h.stop() }
        h.simulator.sync { $0.setAdvertisingController(instances: 3) }
        try await peripheral.startAdvertising("Main").value
        let first = try await peripheral.addAdvertisement(LocalAdvertisement(type: .broadcast, manufacturerData: [0xFFFE: Data([1])],
                                                                             includes: [], discoverable: nil)).value
        let second = try await peripheral.addAdvertisement(LocalAdvertisement(serviceUUIDs: ["180F"], includes: [])).value
        #expect(first.isAdvertising && second.isAdvertising && first.path != second.path)
        #expect(peripheral.advertisingInstances.count == 2)
        let caps = try await peripheral.advertisingCapabilities().value
        #expect(caps.activeInstances == 3 && caps.availableInstances == 0)
        let error = try #require(await failure(peripheral.addAdvertisement(LocalAdvertisement(localName: "Fourth"))))
        #expect(error.kind == .notPermitted)
        #expect(error.message.contains("3 active of 3") && error.message.contains("stop an advertisement"), "\(error)")
        try await first.stop().value
        #expect(!first.isAdvertising && peripheral.advertisingInstances.count == 1)
        let third = try await peripheral.addAdvertisement(LocalAdvertisement(localName: "Fourth")).value
        #expect(third.isAdvertising)
        try await peripheral.shutdown().value
        #expect(!third.isAdvertising && !second.isAdvertising && peripheral.advertisingInstances.isEmpty)
        #expect(try await peripheral.advertisingCapabilities().value.activeInstances == 0)
    }

    // MARK: Sizes

    @Test("the advertising data length counts each AD structure as bluetoothd builds it")
    func testLength_CountsEachStructure() {
        let ad = LocalAdvertisement(serviceUUIDs: ["180F", "F000AA10-0451-4000-B000-000000000000"], localName: "Name",
                                    manufacturerData: [1: Data([1, 2])], serviceData: ["FCD2": Data([9])],
                                    includes: ["tx-power"], appearance: 1, data: [0x30: Data([1, 2, 3])], solicitUUIDs: ["1812"])
        // flags 3, tx power 3, appearance 4, UUIDs (2+2) + (2+16), solicit 2+2, service data 2+2+1,
        // manufacturer 4+2, data 2+3.
        #expect(ad.advertisingDataLength == 3 + 3 + 4 + 4 + 18 + 4 + 5 + 6 + 5)
        #expect(ad.scanResponseLength == 6)
    }
}
