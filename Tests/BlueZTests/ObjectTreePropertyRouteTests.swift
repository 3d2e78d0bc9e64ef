// ObjectTree.observeProperty: a scan's RSSI updates routed straight to their handler.
import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("ObjectTree property routes", .serialized, .timeLimit(.minutes(1)))
struct ObjectTreePropertyRouteTests {
    static let address = "C0:FF:EE:00:00:01"
    static let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"

    /// A discovered SensorTag; returns its path.
    func discoveredDevice(_ h: TreeHarness) async throws -> ObjectPath {
        h.simulator.add(simulatedSensorTag(Self.address))
        try await h.waitUntil("loaded") { h.tree.status.loaded }
        try await h.call("/org/bluez/hci0", Adapter1.interface, "StartDiscovery")
        try await h.waitUntil("device") { h.tree.properties(at: Self.device, interface: Device1.interface)?["RSSI"] != nil }
        return Self.device
    }

    /// The RSSI values of `path` in PropertiesChanged events among `events`.
    func rssiEvents(_ events: [ObjectTreeEvent], _ path: ObjectPath) -> [DBusValue] {
        events.compactMap {
            if case .propertiesChanged(let p, Device1.interface, let changed, _) = $0, p == path { changed["RSSI"] } else { nil }
        }
    }

    @Test("a lone RSSI change reaches the property handler with path and value, updates the cache and skips the other observers")
    func routesLoneRSSIChanges() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        let path = try await discoveredDevice(h)
        let values = Collector<(ObjectPath, DBusValue)>()
        let route = h.tree.observeProperty("RSSI", of: Device1.interface) { values.append(($0, $1)) }
        let subtree = Collector<ObjectTreeEvent>()
        let observer = h.tree.observe(subtree: path) { subtree.append($0) }
        defer { route.cancel(); observer.cancel() }
        let before = h.events.items.count

        h.simulator.updatePeripheral(Self.address) { $0.rssi = -30 }
        h.simulator.updatePeripheral(Self.address) { $0.rssi = -90 }
        _ = try await values.wait(for: 2, timeout: .seconds(5))
        #expect(values.items.map(\.0) == [path, path])
        #expect(values.items.map(\.1) == [.int16(-30), .int16(-90)])
        #expect(h.tree.properties(at: path, interface: Device1.interface)?["RSSI"] == .int16(-90))
        #expect(rssiEvents(subtree.items, path).isEmpty)
        #expect(rssiEvents(Array(h.events.items.dropFirst(before)), path).isEmpty)
    }

    @Test("an RSSI change together with another property, or after the route is cancelled, is a tree event again")
    func otherShapesAndCancelledRouteReachObservers() async throws {
        let h = try await TreeHarness.start()
        defer { h.stop() }
        let path = try await discoveredDevice(h)
        let values = Collector<(ObjectPath, DBusValue)>()
        let route = h.tree.observeProperty("RSSI", of: Device1.interface) { values.append(($0, $1)) }

        h.simulator.updatePeripheral(Self.address) { $0.rssi = -35; $0.name = "Renamed" }
        try await h.waitUntil("RSSI and Name event") { rssiEvents(h.events.items, path).contains(.int16(-35)) }
        #expect(!values.items.contains { $0.1 == .int16(-35) })
        #expect(h.tree.properties(at: path, interface: Device1.interface)?["Name"] == .string("Renamed"))

        route.cancel()
        h.simulator.updatePeripheral(Self.address) { $0.rssi = -85 }
        try await h.waitUntil("RSSI event") { rssiEvents(h.events.items, path).contains(.int16(-85)) }
        #expect(!values.items.contains { $0.1 == .int16(-85) })
        #expect(h.tree.properties(at: path, interface: Device1.interface)?["RSSI"] == .int16(-85))
    }
}
