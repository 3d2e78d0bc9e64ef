// ObjectTree against the simulator: snapshot + signals, match rules, owner changes.
import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("ObjectTree", .serialized, .timeLimit(.minutes(1)))
struct ObjectTreeTests {
    @Test("the tree loads the adapters and matches GetManagedObjects after devices and GATT objects come and go")
    func matchesManagedObjects() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        try await h.waitUntil("loaded") { h.tree.status.loaded }
        #expect(h.tree.paths(withInterface: Adapter1.interface) == ["/org/bluez/hci0", "/org/bluez/hci1"])
        #expect(h.tree.objects == (try await h.managedObjects()))

        for i in 1...3 { h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:0\(i)")) }
        try await h.call("/org/bluez/hci0", Adapter1.interface, "StartDiscovery")
        try await h.waitUntil("three devices") { h.tree.paths(withInterface: "org.bluez.Device1").count == 3 }
        let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
        try await h.call(device, "org.bluez.Device1", "Connect")
        try await h.waitUntil("services resolved") {
            h.tree.properties(at: device, interface: "org.bluez.Device1")?["ServicesResolved"] == .bool(true)
        }
        #expect(h.tree.paths(withInterface: "org.bluez.GattCharacteristic1", under: device).count == 3)
        #expect(h.tree.objects == (try await h.managedObjects()))

        try await h.call(device, "org.bluez.Device1", "Disconnect")
        try await h.waitUntil("disconnected") {
            h.tree.properties(at: device, interface: "org.bluez.Device1")?["Connected"] == .bool(false)
        }
        #expect(h.tree.paths(withInterface: "org.bluez.GattService1").isEmpty)
        h.simulator.removeAdapter(1)
        try await h.waitUntil("hci1 removed") { h.tree.interfaces(at: "/org/bluez/hci1") == nil }
        #expect(h.tree.objects == (try await h.managedObjects()))
    }

    @Test("three match rules serve any number of objects")
    func matchRuleCount() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        try await h.waitUntil("loaded") { h.tree.status.loaded }
        let before = h.client.matchRuleCounters.addMatch
        #expect(before == 3)
        for i in 10...29 { h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:\(i)")) }
        try await h.call("/org/bluez/hci0", Adapter1.interface, "StartDiscovery")
        try await h.waitUntil("twenty devices") { h.tree.paths(withInterface: "org.bluez.Device1").count == 20 }
        h.simulator.updatePeripheral("C0:FF:EE:00:00:10") { $0.rssi = -90 }
        try await h.waitUntil("RSSI change") {
            h.tree.properties(at: "/org/bluez/hci0/dev_C0_FF_EE_00_00_10", interface: "org.bluez.Device1")?["RSSI"] == .int16(-90)
        }
        #expect(h.client.matchRuleCounters.addMatch == before)
    }

    @Test("path and subtree observers get only their objects' events")
    func pathDispatch() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        try await h.waitUntil("loaded") { h.tree.status.loaded }
        let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
        let exact = Collector<ObjectTreeEvent>()
        let subtree = Collector<ObjectTreeEvent>()
        let o1 = h.tree.observe(path: device) { exact.append($0) }
        let o2 = h.tree.observe(subtree: device) { subtree.append($0) }
        defer { o1.cancel(); o2.cancel() }
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:01"))
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:02"))
        try await h.call("/org/bluez/hci0", Adapter1.interface, "StartDiscovery")
        try await h.call(device, "org.bluez.Device1", "Connect")
        try await h.waitUntil("resolved") {
            h.tree.properties(at: device, interface: "org.bluez.Device1")?["ServicesResolved"] == .bool(true)
        }
        #expect(exact.items.allSatisfy { $0.path == device })
        #expect(subtree.items.allSatisfy { $0.path.map { $0.isDescendant(of: device) } ?? false })
        #expect(subtree.items.count > exact.items.count)
        #expect(subtree.items.contains { if case .interfacesAdded(let p, let i) = $0 { p != device && i["org.bluez.GattService1"] != nil } else { false } })
    }

    @Test("bluetoothd leaving empties the tree; its return reloads it")
    func resyncOnOwnerChange() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        try await h.waitUntil("loaded") { h.tree.status.loaded }
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:01"))
        try await h.call("/org/bluez/hci0", Adapter1.interface, "StartDiscovery")
        try await h.waitUntil("device") { !h.tree.paths(withInterface: "org.bluez.Device1").isEmpty }
        let firstOwner = h.tree.status.owner
        let mark = h.events.items.count
        try await h.simulator.restart()
        try await h.waitUntil("reloaded") {
            h.tree.status.owner != firstOwner && h.events.items[mark...].contains { if case .loaded = $0 { true } else { false } }
        }
        let after = Array(h.events.items[mark...])
        let gone = try #require(after.firstIndex { if case .ownerChanged(nil) = $0 { true } else { false } })
        let removedDevice = try #require(after.firstIndex {
            if case .interfacesRemoved(let p, _) = $0 { p.rawValue.hasSuffix("dev_C0_FF_EE_00_00_01") } else { false }
        })
        let loaded = try #require(after.firstIndex { if case .loaded = $0 { true } else { false } })
        #expect(removedDevice < gone && gone < loaded)
        #expect(h.tree.paths(withInterface: "org.bluez.Device1").isEmpty)
        #expect(h.tree.objects == (try await h.managedObjects()))
        #expect(h.client.matchRuleCounters.addMatch == 3)
    }
}
