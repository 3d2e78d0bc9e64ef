// ProfileBusTests: what each BlueZProfile exports — interfaces, methods and properties that
// differ between BlueZ releases.

import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("BlueZ version profiles", .serialized, .timeLimit(.minutes(1)))
struct ProfileBusTests {
    let hci0 = "/org/bluez/hci0"

    /// What a profile must export, as BlueZ's sources say for that release.
    struct Expected: Sendable, CustomTestStringConvertible {
        var profile: BlueZProfile
        var monitorManager: Bool
        var connectDevice: Bool
        var adapterProperties: Set<String>   // of PowerState, Manufacturer, Version, Connectable
        var mtu: Bool
        var bonded: Bool
        var testDescription: String { profile.description }
    }

    static let cases: [Expected] = [
        Expected(profile: .bluez5_55, monitorManager: false, connectDevice: false, adapterProperties: [], mtu: false, bonded: false),
        // 5.55 had no advertisement monitors at all, --experimental or not.
        Expected(profile: .bluez5_55.experimental(true), monitorManager: false, connectDevice: true, adapterProperties: [], mtu: false, bonded: false),
        // PowerState is experimental from 5.66 to 5.72.
        Expected(profile: .bluez5_66, monitorManager: false, connectDevice: false, adapterProperties: [], mtu: true, bonded: true),
        Expected(profile: .bluez5_66.experimental(true), monitorManager: true, connectDevice: true, adapterProperties: ["PowerState"], mtu: true, bonded: true),
        Expected(profile: .bluez5_82, monitorManager: false, connectDevice: false,
                 adapterProperties: ["PowerState", "Manufacturer", "Version", "Connectable"], mtu: true, bonded: true),
        Expected(profile: .bluez5_82.experimental(true), monitorManager: true, connectDevice: true,
                 adapterProperties: ["PowerState", "Manufacturer", "Version", "Connectable"], mtu: true, bonded: true),
    ]

    @Test("each profile exports the adapter interfaces, methods and properties of its release", arguments: cases)
    func adapterSurface(_ expected: Expected) async throws {
        let h = try await BusHarness.start(adapters: 1, profile: expected.profile)
        defer { h.stop() }
        #expect(h.simulator.profile == expected.profile)
        let objects = try await h.managedObjects()
        let adapter = try #require(objects[hci0])
        #expect((adapter["org.bluez.AdvertisementMonitorManager1"] != nil) == expected.monitorManager)
        let varying: Set<String> = ["PowerState", "Manufacturer", "Version", "Connectable", "ExperimentalFeatures"]
        #expect(Set(adapter["org.bluez.Adapter1"]?.keys.filter(varying.contains) ?? []) == expected.adapterProperties)
        #expect(adapter["org.bluez.Adapter1"]?["Roles"] == .array(element: .string, [.string("central"), .string("peripheral")]))

        // ConnectDevice: introspected and answered only with --experimental.
        let xml = try await h.call(hci0, "org.freedesktop.DBus.Introspectable", "Introspect")
        guard case .string(let text)? = xml.body.first else { Issue.record("no introspection"); return }
        #expect(text.contains("name=\"ConnectDevice\"") == expected.connectDevice)
        let error = await h.error(hci0, "org.bluez.Adapter1", "ConnectDevice",
                                  [.properties(["Address": .string("C0:FF:EE:00:00:0G"), "AddressType": .string("public")])])
        #expect(error?.name == (expected.connectDevice ? "org.bluez.Error.InvalidArguments" : DBusRemoteError.unknownMethod))

        // RegisterMonitor: no such interface without the manager.
        if !expected.monitorManager {
            #expect(await h.error(hci0, "org.bluez.AdvertisementMonitorManager1", "RegisterMonitor", [.objectPath("/x")])?.name
                    == DBusRemoteError.unknownInterface)
        }
    }

    @Test("Device1.Bonded (5.65+) and GattCharacteristic1.MTU (5.62+) follow the profile", arguments: [BlueZProfile.bluez5_55, .bluez5_66, .bluez5_82])
    func deviceAndCharacteristic(_ profile: BlueZProfile) async throws {
        let h = try await BusHarness.start(adapters: 1, profile: profile)
        defer { h.stop() }
        let device = try await h.discover(testPeripheral())
        try await h.connect(device)
        let objects = try await h.managedObjects()
        #expect((objects[device]?["org.bluez.Device1"]?["Bonded"] != nil) == profile.deviceBonded)
        let characteristics = objects.filter { $0.key.hasPrefix(device + "/") && $0.value["org.bluez.GattCharacteristic1"] != nil }
        #expect(!characteristics.isEmpty)
        #expect(characteristics.allSatisfy { ($0.value["org.bluez.GattCharacteristic1"]?["MTU"] != nil) == profile.characteristicMTU })
        // Pairing sets Bonded only where the release has it.
        try await h.call(device, "org.bluez.Device1", "Pair")
        let paired = try await h.managedObjects()[device]?["org.bluez.Device1"]
        #expect(paired?["Paired"] == .bool(true))
        #expect((paired?["Bonded"] != nil) == profile.deviceBonded)
    }

    @Test("ExperimentalFeatures is exported only where the release has it and kernel features are on")
    func experimentalFeatures() async throws {
        var profile = BlueZProfile.bluez5_82
        profile.experimentalFeatures = ["330859bc-7506-492d-9370-9a6f0614037f"]
        let h = try await BusHarness.start(adapters: 1, profile: profile)
        defer { h.stop() }
        #expect(try await h.managedObjects()[hci0]?["org.bluez.Adapter1"]?["ExperimentalFeatures"]
                == .array(element: .string, [.string("330859bc-7506-492d-9370-9a6f0614037f")]))
        var old = BlueZProfile.bluez5_55
        old.experimentalFeatures = profile.experimentalFeatures
        #expect(!old.exportsExperimentalFeatures)
    }

    @Test("experimental: overrides the profile's, as before profiles")
    func experimentalArgument() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1, experimental: true)
        defer { simulator.stop() }
        #expect(simulator.profile == BlueZProfile.bluez5_66.experimental(true))
    }
}
