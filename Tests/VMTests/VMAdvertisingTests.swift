// Real BlueZ: advertising, all of it — the adapter's capabilities as bluetoothd reports them,
// every LEAdvertisement1 property a scanner can see (the central on hci0 reading Device1),
// several advertisements at once up to the controller's instances, and an iBeacon registering.
//
// What a scanner cannot show: SolicitUUIDs (bluetoothd decodes AD types 0x14/0x15/0x1F and has no
// Device1 property for them), Duration, Timeout, MinInterval/MaxInterval (timing, not data) and
// SecondaryChannel (btvirt's controller has no extended advertising: no SupportedSecondaryChannels).

import BlueCapKit
import DBus
import Foundation
import Testing
import TestSupport

extension VM {
    /// Whether `LEAdvertisingManager1.SupportedFeatures`/`SupportedCapabilities` are exported:
    /// from 5.77 always, from 5.56 only with `--experimental`, never in 5.55.
    static let exportsAdvertisingCapabilities: Bool = {
        let v = bluezVersion.split(separator: ".").compactMap { Int($0) }
        if !v.lexicographicallyPrecedes([5, 77]) { return true }
        return experimental && !v.lexicographicallyPrecedes([5, 56])
    }()
}

extension RealBlueZTests {
    /// Nested in ``RealBlueZTests`` so that its `.serialized` holds across both (the scenarios
    /// advertise on hci1 and scan on hci0, as the other VM tests do).
    @Suite("Real BlueZ: advertising")
    struct VMAdvertisingTests {
        /// A peripheral manager on hci1, a central on hci0, both powered; no device object of the
        /// peripheral on hci0 before or after `body`.
        static func withManagers(_ body: (PeripheralManager, CentralManager, String) async throws -> Void) async throws {
            let centralSession = BluetoothSession(), peripheralSession = BluetoothSession()
            let bus = try centralSession.testConnection()
            try await VM.settle(bus)
            let address = try await VM.address(bus, VM.peripheralAdapter)
            await VM.forget(bus, address, on: [VM.centralAdapter])
            let peripheral = PeripheralManager(adapter: VM.peripheralAdapter, session: peripheralSession)
            let central = CentralManager(adapter: VM.centralAdapter, session: centralSession)
            func cleanUp() async {
                central.stopScanning()
                await withDeadlineOrNil { _ = try? await peripheral.shutdown().value }
                await VM.forget(bus, address, on: [VM.centralAdapter])
            }
            do {
                try await peripheral.whenPoweredOn(timeout: .seconds(15)).value
                try await central.whenPoweredOn(timeout: .seconds(15)).value
                try await body(peripheral, central, address)
            } catch {
                await cleanUp()
                throw error
            }
            await cleanUp()
            try await VM.settle(bus)
        }

        static func note(_ name: String, _ line: String) {
            let text = "BlueZ \(VM.bluezVersion)\(VM.experimental ? " -E" : ""): \(line)"
            print(text)
            try? (text + "\n").write(toFile: VM.logDirectory + "/" + name, atomically: true, encoding: .utf8)
        }

        @Test("capabilities read from bluetoothd: instances, includes; features and lengths where the release exports them",
              .timeLimit(.minutes(3)))
        func capabilitiesFromBluetoothd() async throws {
            try await Self.withManagers { peripheral, _, _ in
                let caps = try await peripheral.advertisingCapabilities().value
                Self.note("advertising-capabilities.txt", "\(caps)")
                let free = try #require(caps.availableInstances)
                #expect(free >= 1 && caps.activeInstances == 0, "\(caps)")
                #expect(caps.supportedIncludes?.contains("tx-power") == true, "\(caps)")
                #expect((caps.supportedFeatures != nil) == VM.exportsAdvertisingCapabilities, "\(caps)")
                #expect((caps.maxAdvertisingDataLength != nil) == VM.exportsAdvertisingCapabilities, "\(caps)")
                if let max = caps.maxAdvertisingDataLength { #expect(max >= 31) }
                try await peripheral.startAdvertising("Counted").value
                let after = try await peripheral.advertisingCapabilities().value
                #expect(after.activeInstances == 1 && after.availableInstances == free - 1, "\(after)")
            }
        }

        @Test("a scanner on hci0 sees service data, appearance, manufacturer data, UUIDs, name, and the limited flag of a discoverable timeout",
              .timeLimit(.minutes(3)))
        func propertiesSeenByScanner() async throws {
            try await Self.withManagers { peripheral, central, address in
                var ad = LocalAdvertisement(type: .peripheral, serviceUUIDs: ["180F"], localName: "AdvAll",
                                            manufacturerData: [0xFFFE: Data([0xAD, 2])], serviceData: ["FCD2": Data([0x40, 1])],
                                            includes: [], appearance: 0x0341, data: [0x30: Data("H".utf8)])
                ad.solicitUUIDs = ["1812"]
                ad.discoverableTimeout = 120
                ad.timeout = 300
                ad.duration = 2
                ad.minInterval = 100
                ad.maxInterval = 150
                let registered = ad
                try await withDeadline(.seconds(20), "advertise") { try await peripheral.startAdvertising(registered).value }
                let found = Collector<Advertisement>()
                central.startScanning().onSuccess(context: .immediate) { p in
                    if p.address == address, p.advertisement.localName == "AdvAll", p.advertisement.appearance != nil {
                        found.append(p.advertisement)
                    }
                }
                let seen = try await found.wait(for: 1, timeout: .seconds(40))[0]
                Self.note("advertising-properties.txt", "serviceData=\(seen.serviceData) appearance=\(seen.appearance.map { String($0, radix: 16) } ?? "absent") "
                          + "manufacturerData=\(seen.manufacturerData) uuids=\(seen.serviceUUIDs) raw=\(seen.advertisingData.map { "\($0)" } ?? "absent") "
                          + "flags=\(seen.flags.map { "\($0)" } ?? "absent")")
                #expect(seen.serviceData[BLEUUID("FCD2")] == Data([0x40, 1]))
                #expect(seen.appearance == 0x0341)
                #expect(seen.manufacturerData[0xFFFE] == Data([0xAD, 2]))
                #expect(seen.serviceUUIDs.contains(BLEUUID("180F")))
                if VM.exportsAdvertisingData {
                    #expect(seen.advertisingData?[0x30] == Data("H".utf8))
                    // DiscoverableTimeout: bluetoothd advertises Limited Discoverable meanwhile.
                    #expect(seen.flags?.contains(.leLimitedDiscoverable) == true, "\(String(describing: seen.flags))")
                }
            }
        }

        @Test("several advertisements at once up to the instances; past them the error names the usage; an iBeacon registers",
              .timeLimit(.minutes(4)))
        func severalInstances() async throws {
            try await Self.withManagers { peripheral, central, address in
                try await peripheral.startAdvertising(LocalAdvertisement(manufacturerData: [0xFFF0: Data([0])], includes: [])).value
                let free = try #require(try await peripheral.advertisingCapabilities().value.availableInstances)
                var instances: [AdvertisingInstance] = []
                for i in 0..<free {
                    let ad = LocalAdvertisement(manufacturerData: [0xFFF1 + UInt16(i): Data([UInt8(i)])], includes: [], duration: 1)
                    instances.append(try await peripheral.addAdvertisement(ad).value)
                }
                let full = try await peripheral.advertisingCapabilities().value
                Self.note("advertising-instances.txt", "\(instances.count + 1) registered; \(full)")
                #expect(full.availableInstances == 0 && full.activeInstances == free + 1, "\(full)")
                do {
                    _ = try await peripheral.addAdvertisement(LocalAdvertisement(localName: "Extra", includes: [])).value
                    Issue.record("an advertisement past the instances was accepted")
                } catch let error as BlueCapError {
                    #expect(error.kind == .notPermitted && error.message.contains("active of"), "\(error)")
                }
                // The scanner sees more than one of them (the kernel rotates the instances): every
                // advertisement update, not the first report only.
                let companies = Collector<UInt16>()
                central.startScanning(options: ScanOptions(allowDuplicates: true)).onSuccess(context: .immediate) { p in
                    if p.address == address { for id in p.advertisement.manufacturerData.keys { companies.append(id) } }
                }
                let wanted = Set([0xFFF0, 0xFFF1] as [UInt16])
                try await withDeadline(.seconds(60), "two instances seen") {
                    while !wanted.isSubset(of: Set(companies.items)) {
                        _ = try await companies.wait(for: companies.items.count + 1, timeout: .seconds(40))
                    }
                }
                central.stopScanning()
                for instance in instances { try await instance.stop().value }
                // An iBeacon (broadcast, no discoverable flags) is accepted by bluetoothd.
                let beacon = BeaconRegion(proximityUUID: UUID(), identifier: "vm", major: 1, minor: 2, measuredPower: -59)
                try await peripheral.startAdvertising(beacon: beacon).value
                #expect(peripheral.isAdvertising)
                #expect(try await peripheral.advertisingCapabilities().value.activeInstances == 1)
            }
        }
    }
}
