// ObjectTree.observeValue: StartNotify notifications routed straight to a characteristic.
import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("ObjectTree value routes", .serialized, .timeLimit(.minutes(1)))
struct ObjectTreeValueRouteTests {
    static let dataUUID = AccelerometerUUIDs.data.uuidString

    /// A connected SensorTag with StartNotify on its data characteristic; returns that path.
    func notifyingCharacteristic(_ h: TreeHarness) async throws -> ObjectPath {
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:01"))
        let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
        try await h.waitUntil("loaded") { h.tree.status.loaded }
        try await h.call("/org/bluez/hci0", Adapter1.interface, "StartDiscovery")
        try await h.waitUntil("device") { h.tree.interfaces(at: device) != nil }
        try await h.call(device, "org.bluez.Device1", "Connect")
        try await h.waitUntil("resolved") {
            h.tree.properties(at: device, interface: "org.bluez.Device1")?["ServicesResolved"] == .bool(true)
        }
        let path = try #require(h.tree.paths(withInterface: GattCharacteristic1.interface, under: device).first {
            guard case .string(let uuid)? = h.tree.properties(at: $0, interface: GattCharacteristic1.interface)?["UUID"] else { return false }
            return uuid.lowercased() == Self.dataUUID.lowercased()
        })
        try await h.call(path, GattCharacteristic1.interface, "StartNotify")
        try await h.waitUntil("notifying") {
            h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Notifying"] == .bool(true)
        }
        return path
    }

    /// Whether `events` hold a PropertiesChanged of `Value` on `path`.
    func sawValueEvent(_ events: [ObjectTreeEvent], _ path: ObjectPath) -> Bool {
        events.contains {
            if case .propertiesChanged(let p, _, let changed, _) = $0 { p == path && changed["Value"] != nil } else { false }
        }
    }

    @Test("a lone Value change reaches the value handler with its bytes, updates the cache and skips the other observers")
    func routesLoneValueChanges() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        let path = try await notifyingCharacteristic(h)
        let values = Collector<Data>()
        let route = h.tree.observeValue(at: path) { values.append($0) }
        let subtree = Collector<ObjectTreeEvent>()
        let observer = h.tree.observe(subtree: path) { subtree.append($0) }
        defer { route.cancel(); observer.cancel() }

        for i in 1...3 { h.simulator.notify(peripheral: "C0:FF:EE:00:00:01", characteristic: Self.dataUUID, value: Data([UInt8(i), 2, 3])) }
        _ = try await values.wait(for: 3, timeout: .seconds(5))
        #expect(values.items == [Data([1, 2, 3]), Data([2, 2, 3]), Data([3, 2, 3])])
        #expect(h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Value"]
            == .array(element: .byte, [.byte(3), .byte(2), .byte(3)]))
        #expect(!sawValueEvent(subtree.items, path))
        #expect(!sawValueEvent(h.events.items, path))
    }

    @Test("without a value handler, or after it is cancelled, Value changes are tree events again")
    func cancelledRouteFallsBackToEvents() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        let path = try await notifyingCharacteristic(h)
        let values = Collector<Data>()
        let route = h.tree.observeValue(at: path) { values.append($0) }
        h.simulator.notify(peripheral: "C0:FF:EE:00:00:01", characteristic: Self.dataUUID, value: Data([9]))
        _ = try await values.wait(for: 1, timeout: .seconds(5))
        route.cancel()

        h.simulator.notify(peripheral: "C0:FF:EE:00:00:01", characteristic: Self.dataUUID, value: Data([7, 7]))
        try await h.waitUntil("Value event") { sawValueEvent(h.events.items, path) }
        #expect(values.items == [Data([9])])
        #expect(h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Value"]
            == .array(element: .byte, [.byte(7), .byte(7)]))
    }

    @Test("the routed bytes are what every read of the tree returns, also after other changes and after the route ends")
    func routedBytesReadBack() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        let path = try await notifyingCharacteristic(h)
        let values = Collector<Data>()
        let route = h.tree.observeValue(at: path) { values.append($0) }
        defer { route.cancel() }
        let sent = Data((0..<20).map { UInt8($0 * 7) })
        let expected = DBusValue.array(element: .byte, sent.map { .byte($0) })

        h.simulator.notify(peripheral: "C0:FF:EE:00:00:01", characteristic: Self.dataUUID, value: Data([1]))
        h.simulator.notify(peripheral: "C0:FF:EE:00:00:01", characteristic: Self.dataUUID, value: sent)
        _ = try await values.wait(for: 2, timeout: .seconds(5))
        #expect(h.tree.interfaces(at: path)?[GattCharacteristic1.interface]?["Value"] == expected)
        #expect(h.tree.objects[path]?[GattCharacteristic1.interface]?["Value"] == expected)
        #expect(h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Value"] == expected)

        // Another property of the same object changes (through the generic path): the value stays.
        try await h.call(path, GattCharacteristic1.interface, "StopNotify")
        try await h.waitUntil("not notifying") {
            h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Notifying"] == .bool(false)
        }
        #expect(h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Value"] == expected)

        // A change routed after a read, then the route cancelled before the next read.
        try await h.call(path, GattCharacteristic1.interface, "StartNotify")
        try await h.waitUntil("notifying again") {
            h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Notifying"] == .bool(true)
        }
        h.simulator.notify(peripheral: "C0:FF:EE:00:00:01", characteristic: Self.dataUUID, value: Data([9, 8]))
        _ = try await values.wait(for: 3, timeout: .seconds(5))
        route.cancel()
        #expect(h.tree.properties(at: path, interface: GattCharacteristic1.interface)?["Value"]
            == .array(element: .byte, [.byte(9), .byte(8)]))
        #expect(values.items == [Data([1]), sent, Data([9, 8])])
    }
}
