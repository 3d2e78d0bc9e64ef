// Peripheral role lifecycle: caller restriction, advertisement release, bluetoothd restart,
// iBeacon bytes, unregistration order.

import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Peripheral role: security, release, restart, beacons, teardown", .serialized)
struct PeripheralLifecycleTests {
    @Test("a connection other than org.bluez's owner is refused with AccessDenied and changes nothing")
    func foreignCallerRefused() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        let service = try await PeripheralAccelerometerTests.serve(h)
        let enabled = try #require(service.characteristic(Accelerometer.Enabled.uuid))
        let intruder = try h.bus.connect()
        let owner = h.peripheralConnection.uniqueName
        let enabledPath = h.peripheralManager.applicationPath + "/service0/char1"
        let write = await h.error(enabledPath, "org.bluez.GattCharacteristic1", "WriteValue",
                                  [bytesValue([1]), .properties([:])], on: intruder, destination: owner)
        #expect(write?.name == DBusRemoteError.accessDenied)
        let read = await h.error(enabledPath, "org.bluez.GattCharacteristic1", "ReadValue", [.properties([:])],
                                 on: intruder, destination: owner)
        #expect(read?.name == DBusRemoteError.accessDenied)
        let objects = await h.error(h.peripheralManager.applicationPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
                                    on: intruder, destination: owner)
        #expect(objects?.name == DBusRemoteError.accessDenied)
        let release = await h.error(h.peripheralManager.advertisementPath, "org.bluez.LEAdvertisement1", "Release",
                                    on: intruder, destination: owner)
        #expect(release?.name == DBusRemoteError.accessDenied)
        #expect(enabled.value == Data([0]))
        #expect(h.peripheralManager.isAdvertising)
        // The real owner still gets through.
        _ = try await h.discoverPeripheral()
        try await h.connectPeripheral()
        #expect(try await h.read(try await h.characteristicPath(Accelerometer.Enabled.uuid)) == [0])
    }

    @Test("bluetoothd releasing the advertisement shows in isAdvertising and the advertising stream")
    func advertisementReleased() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        _ = try await PeripheralAccelerometerTests.serve(h)
        try await h.waitItem(h.advertising, "advertising") { $0 }
        let from = h.advertising.items.count
        let owner = h.peripheralConnection.uniqueName, path = h.peripheralManager.advertisementPath
        try h.simulator.sync { core in try core.unregisterAdvertisement(adapter: 1, owner: owner, path: path, release: true) }
        try await h.waitItem(h.advertising, "released", after: from) { !$0 }
        #expect(!h.peripheralManager.isAdvertising)
        // Advertising again works.
        try await withDeadline(.seconds(5), "advertise again") { try await h.peripheralManager.startAdvertising("Again").value }
        #expect(h.peripheralManager.isAdvertising)
    }

    @Test("after bluetoothd restarts (new org.bluez owner) the state resets and services and advertisement come back")
    func reregisteredAfterRestart() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        let service = try await PeripheralAccelerometerTests.serve(h)
        let enabled = try #require(service.characteristic(Accelerometer.Enabled.uuid))
        enabled.value = Data([1])
        let states = h.states.items.count, ads = h.advertising.items.count
        let oldOwner = h.simulator.uniqueName
        try await h.simulator.restart()
        #expect(h.simulator.uniqueName != oldOwner)
        try await h.waitState(.resetting, after: states)
        try await h.waitState(.poweredOn, after: states + 1)
        try await h.waitItem(h.advertising, "advertising again", after: ads) { $0 }
        #expect(h.peripheralManager.isAdvertising)
        let props = try await h.discoverPeripheral(after: h.signals.items.count)
        #expect(props["Name"] == .string("SensorTag"))
        try await h.connectPeripheral()
        #expect(try await h.read(try await h.characteristicPath(Accelerometer.Enabled.uuid)) == [1])
        // The old owner's name is no longer allowed (it is gone); a foreign caller still is refused.
        let intruder = try h.bus.connect()
        let e = await h.error(h.peripheralManager.applicationPath + "/service0/char1", "org.bluez.GattCharacteristic1",
                              "ReadValue", [.properties([:])], on: intruder, destination: h.peripheralConnection.uniqueName)
        #expect(e?.name == DBusRemoteError.accessDenied)
    }

    @Test("an iBeacon advertisement carries Apple's 0x004C manufacturer data, byte for byte")
    func beaconBytes() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let region = BeaconRegion(proximityUUID: uuid, identifier: "test", major: 0x1234, minor: 0xABCD, measuredPower: -59)
        try await withDeadline(.seconds(5), "beacon") { try await h.peripheralManager.startAdvertising(beacon: region).value }
        let props = try await h.discoverPeripheral()
        guard case .dict(_, _, let entries)? = props["ManufacturerData"] else {
            Issue.record("no ManufacturerData in \(props)")
            return
        }
        #expect(entries.count == 1)
        #expect(entries.first?.key == .uint16(0x004C))
        let expected: [UInt8] = [0x02, 0x15,
                                 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                 0x12, 0x34, 0xAB, 0xCD, 0xC5]
        #expect(byteArray(entries.first?.value) == expected)
    }

    @Test("shutdown unregisters the advertisement, then the application, then unexports objects last-first")
    func teardownOrder() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        _ = try await PeripheralAccelerometerTests.serve(h)
        let from = h.signals.items.count
        let root = h.peripheralManager.applicationPath
        await withDeadlineOrNil { _ = try? await h.peripheralManager.shutdown().value }
        let adapter = "/org/bluez/hci1"
        let adGone = try await h.waitSignal("advertisement unregistered", after: from) {
            isChanged($0, adapter, "ActiveInstances", .byte(0))
        }
        let appGone = try await h.waitSignal("application unregistered", after: from) {
            guard isChanged($0, adapter, "UUIDs"), case .array(_, let u)? = changedProperties($0)?["UUIDs"] else { return false }
            return !u.contains(.string(Accelerometer.uuid.uuidString))
        }
        let char2 = try await h.waitSignal("char2 removed", after: from) { isRemoved($0, root + "/service0/char2") }
        let char0 = try await h.waitSignal("char0 removed", after: from) { isRemoved($0, root + "/service0/char0") }
        let service = try await h.waitSignal("service removed", after: from) { isRemoved($0, root + "/service0") }
        #expect(adGone < appGone)
        #expect(appGone < char2 && char2 < char0 && char0 < service)
        // The advertisement object is gone too (an existing object would answer AccessDenied).
        let intruder = try h.bus.connect()
        let release = await h.error(h.peripheralManager.advertisementPath, "org.bluez.LEAdvertisement1", "Release",
                                    on: intruder, destination: h.peripheralConnection.uniqueName)
        #expect(release?.name == DBusRemoteError.unknownObject)
        #expect(!h.peripheralManager.isAdvertising)
        #expect(h.peripheralManager.services.isEmpty)
    }
}
