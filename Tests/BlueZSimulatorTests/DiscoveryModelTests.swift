// DiscoveryModelTests: Adapter1 discovery in the bus-free model.

import Foundation
import Testing
@testable import BlueZSimulator

@Suite("Discovery (model)")
struct DiscoveryModelTests {
    @Test("start publishes /org/bluez and the adapters with BlueZ's property types")
    func startPublishesAdapters() {
        let h = ModelHarness(adapters: 2)
        let objects = h.core.store.managedObjects
        #expect(objects["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
        let a = objects[hci1]?["org.bluez.Adapter1"]
        #expect(a?["Address"] == .string("00:B1:0E:5C:00:01"))
        #expect(a?["Powered"] == .bool(true))
        #expect(a?["Class"]?.signature == "u")
        #expect(a?["Roles"] == .strings(["central", "peripheral"]))
        let adv = objects[hci0]?["org.bluez.LEAdvertisingManager1"]
        #expect(adv?["SupportedInstances"] == .byte(5))
        #expect(adv?["ActiveInstances"] == .byte(0))
        #expect(objects[hci0]?["org.bluez.GattManager1"] != nil)
    }

    @Test("devices appear only while discovering, with BlueZ's Device1 properties")
    func devicesAppearWhileDiscovering() throws {
        let h = ModelHarness()
        h.core.addPeripheral(testPeripheral())
        #expect(h.take().isEmpty)
        try h.core.startDiscovery(adapter: 0, sender: ":1.5")
        let events = h.take()
        #expect(events.first == .propertiesChanged(path: hci0, interface: "org.bluez.Adapter1", changed: ["Discovering": .bool(true)], invalidated: []))
        guard case .interfacesAdded(let path, let ifaces)? = events.last else { Issue.record("no device"); return }
        #expect(path == "/org/bluez/hci0/dev_C0_FF_EE_00_00_01")
        let d = ifaces["org.bluez.Device1"] ?? [:]
        #expect(d["RSSI"] == .int16(-50))
        #expect(d["TxPower"] == .int16(4))
        #expect(d["Name"] == .string("Pulse"))
        #expect(d["AddressType"] == .string("public"))
        #expect(d["UUIDs"] == .strings(["0000180d-0000-1000-8000-00805f9b34fb"]))
        #expect(d["ManufacturerData"] == .manufacturerData([0x004C: [1, 2]]))
        #expect(d["ServiceData"] == .serviceData(["0000180d-0000-1000-8000-00805f9b34fb": [9]]))
        #expect(d["Adapter"] == .objectPath(hci0))
        #expect(d["Connected"] == .bool(false))
    }

    @Test("a UUID filter hides non-matching devices until another client scans unfiltered")
    func filtersAreMergedAcrossClients() throws {
        let h = ModelHarness()
        h.core.addPeripheral(testPeripheral())
        h.core.addPeripheral(.spec(address: "C0:FF:EE:00:00:02").name("Other").advertising(uuids: ["180F"]))
        var f = DiscoveryFilter()
        f.uuids = [BluetoothUUID.normalize("180F")!]
        try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.5", filter: f)
        try h.core.startDiscovery(adapter: 0, sender: ":1.5")
        #expect(h.take().added == [devicePath(0, "C0:FF:EE:00:00:02")])
        try h.core.startDiscovery(adapter: 0, sender: ":1.6")
        #expect(h.take().added == [devicePath(0, "C0:FF:EE:00:00:01")])
    }

    @Test("RSSI and Pathloss together, or an RSSI out of range, are InvalidArguments")
    func invalidFiltersAreRejected() {
        let h = ModelHarness()
        var both = DiscoveryFilter()
        both.rssi = -70
        both.pathloss = 40
        #expect(throws: BlueZErrorReply.invalidArguments) { try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.5", filter: both) }
        var high = DiscoveryFilter()
        high.rssi = 30
        #expect(throws: BlueZErrorReply.invalidArguments) { try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.5", filter: high) }
    }

    @Test("RSSI, Pathloss and Pattern filters decide what is reported")
    func proximityAndPatternFilters() throws {
        let h = ModelHarness()
        h.core.addPeripheral(testPeripheral("C0:FF:EE:00:00:01", rssi: -80))
        h.core.addPeripheral(testPeripheral("C0:FF:EE:00:00:02", rssi: -40).name("Near"))
        var f = DiscoveryFilter()
        f.rssi = -60
        try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.5", filter: f)
        try h.core.startDiscovery(adapter: 0, sender: ":1.5")
        #expect(h.take().added == [devicePath(0, "C0:FF:EE:00:00:02")])
        f = DiscoveryFilter()
        f.pattern = "C0:FF:EE:00:00:01"
        try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.5", filter: f)
        #expect(h.take().added == [devicePath(0, "C0:FF:EE:00:00:01")])
        f = DiscoveryFilter()
        f.pathloss = 40  // TxPower 4 - RSSI -40 = 44 > 40
        try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.7", filter: f)
        try h.core.startDiscovery(adapter: 0, sender: ":1.7")
        #expect(h.take().added.isEmpty)
    }

    @Test("sessions are per client: Discovering stays true until the last one stops or leaves")
    func sessionsArePerClient() throws {
        let h = ModelHarness()
        h.core.addPeripheral(testPeripheral())
        try h.core.startDiscovery(adapter: 0, sender: ":1.5")
        #expect(throws: BlueZErrorReply.busy) { try h.core.startDiscovery(adapter: 0, sender: ":1.5") }
        try h.core.startDiscovery(adapter: 0, sender: ":1.6")
        _ = h.take()
        try h.core.stopDiscovery(adapter: 0, sender: ":1.5")
        #expect(h.take().isEmpty)
        #expect(throws: BlueZErrorReply.failed("No discovery started")) { try h.core.stopDiscovery(adapter: 0, sender: ":1.5") }
        h.core.clientVanished(":1.6")
        let events = h.take()
        #expect(events.first == .propertiesChanged(path: hci0, interface: "org.bluez.Adapter1", changed: ["Discovering": .bool(false)], invalidated: []))
        #expect(events.contains(.propertiesChanged(path: devicePath(0, "C0:FF:EE:00:00:01"), interface: "org.bluez.Device1",
                                                   changed: [:], invalidated: ["RSSI", "TxPower"])))
    }

    @Test("RSSI updates need an 8 dBm change without a proximity filter, any change with one")
    func rssiDeltaThreshold() throws {
        let h = ModelHarness()
        let address = "C0:FF:EE:00:00:01"
        h.core.addPeripheral(testPeripheral(address))
        try h.core.startDiscovery(adapter: 0, sender: ":1.5")
        _ = h.take()
        h.core.updatePeripheral(address) { $0.rssi = -53 }
        #expect(h.take().changes(devicePath(0, address)).compactMap { $0["RSSI"] }.isEmpty)
        h.core.updatePeripheral(address) { $0.rssi = -62 }
        #expect(h.take().changes(devicePath(0, address)).compactMap { $0["RSSI"] } == [.int16(-62)])
        var f = DiscoveryFilter()
        f.rssi = -100
        try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.5", filter: f)
        _ = h.take()
        h.core.updatePeripheral(address) { $0.rssi = -61 }
        #expect(h.take().changes(devicePath(0, address)).compactMap { $0["RSSI"] } == [.int16(-61)])
    }

    @Test("StartDiscovery on a powered-off adapter is NotReady")
    func poweredOffIsNotReady() throws {
        let h = ModelHarness()
        try h.core.setAdapterProperty(0, "Powered", .bool(false))
        #expect(throws: BlueZErrorReply.notReady) { try h.core.startDiscovery(adapter: 0, sender: ":1.5") }
    }

    @Test("a scan storm of N devices at R Hz emits one RSSI change per device per tick")
    func scanStorm() throws {
        let h = ModelHarness()
        var f = DiscoveryFilter()
        f.rssi = -127
        try h.core.setDiscoveryFilter(adapter: 0, sender: ":1.5", filter: f)
        try h.core.startDiscovery(adapter: 0, sender: ":1.5")
        h.core.startRSSIStorm(devices: 50, hz: 10)
        #expect(h.take().added.count == 50)
        h.advance(1000)
        let rssiChanges = h.take().filter { if case .propertiesChanged(_, _, let c, _) = $0 { c["RSSI"] != nil } else { false } }
        #expect(rssiChanges.count == 500)
        h.core.stopRSSIStorm()
        h.advance(1000)
        #expect(h.take().isEmpty)
    }
}
