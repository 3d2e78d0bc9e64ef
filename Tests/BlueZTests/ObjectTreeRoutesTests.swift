// ObjectTreeRoutes: every observer of the tree in one structure, found by path.
@testable import BlueZ
import DBus
import Foundation
import Locking
import Testing

@Suite("ObjectTree routes")
struct ObjectTreeRoutesTests {
    /// Records which handlers ran.
    final class Calls: Sendable {
        let names = Locked<[String]>([])
        func handler(_ name: String) -> ObjectTree.Handler { { [self] _ in names.withLock { $0.append(name) } } }
        func value(_ name: String) -> ObjectTree.ValueHandler { { [self] _ in names.withLock { $0.append(name) } } }
        func property(_ name: String) -> ObjectTree.PropertyHandler { { [self] _, _ in names.withLock { $0.append(name) } } }
        /// The names of `handlers`, run once each, sorted.
        func ran(_ handlers: [ObjectTree.Handler]) -> [String] {
            names.withLock { $0 = [] }
            for h in handlers { h(.loaded) }
            return names.withLock { $0 }.sorted()
        }
    }

    static let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
    static let characteristic: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"
    static let other: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_02"

    @Test("an event finds the tree observers, its path's own and every enclosing subtree's, and no other")
    func eventObservers() {
        let calls = Calls()
        var routes = ObjectTreeRoutes()
        routes.add(1, .tree, .events(calls.handler("tree")))
        routes.add(2, .path(Self.characteristic), .events(calls.handler("exact")))
        routes.add(3, .subtree(Self.device), .events(calls.handler("device subtree")))
        routes.add(4, .subtree(.root), .events(calls.handler("root subtree")))
        routes.add(5, .subtree(Self.other), .events(calls.handler("other subtree")))
        routes.add(6, .path(Self.characteristic), .values(calls.value("value")))

        #expect(calls.ran(routes.observers(of: Self.characteristic)) == ["device subtree", "exact", "root subtree", "tree"])
        #expect(calls.ran(routes.observers(of: Self.device)) == ["device subtree", "root subtree", "tree"])
        #expect(calls.ran(routes.observers(of: nil)) == ["tree"])
        // Known paths are answered from the cache; an observer coming or going drops it.
        routes.add(7, .path(Self.device), .events(calls.handler("device")))
        #expect(calls.ran(routes.observers(of: Self.device)) == ["device", "device subtree", "root subtree", "tree"])
        routes.remove(3, .subtree(Self.device), .events)
        #expect(calls.ran(routes.observers(of: Self.characteristic)) == ["exact", "root subtree", "tree"])
    }

    @Test("a path's event observers and value handlers share its slot, which goes with the last of them")
    func pathSlots() {
        let calls = Calls()
        var routes = ObjectTreeRoutes()
        routes.add(1, .path(Self.characteristic), .values(calls.value("value")))
        routes.add(2, .path(Self.characteristic), .events(calls.handler("exact")))
        #expect(routes.paths[Self.characteristic]?.values.count == 1)
        #expect(routes.paths[Self.characteristic]?.events.count == 1)
        routes.remove(1, .path(Self.characteristic), .values)
        #expect(routes.paths[Self.characteristic]?.values.isEmpty == true)
        // The event observer is unaffected by the value handler's going.
        #expect(calls.ran(routes.observers(of: Self.characteristic)) == ["exact"])
        routes.remove(2, .path(Self.characteristic), .events)
        #expect(routes.paths[Self.characteristic] == nil)
        #expect(routes.observers(of: Self.characteristic).isEmpty)
    }

    @Test("property routes are tree-wide targets, picked by their key and gone with their last handler")
    func propertyRoutes() {
        let calls = Calls()
        var routes = ObjectTreeRoutes()
        let rssi = ObjectTreeRoutes.PropertyKey(interface: Device1.interface, name: "RSSI")
        routes.add(1, .tree, .property(rssi, calls.property("rssi")))
        routes.add(2, .tree, .property(rssi, calls.property("rssi again")))
        #expect(routes.propertyRoute { $0.name == "TxPower" } == nil)
        let route = routes.propertyRoute { $0 == rssi }
        #expect(route?.key == rssi && route?.handlers.map(\.id) == [1, 2])
        // Property routes are not event observers.
        #expect(routes.observers(of: Self.device).isEmpty)
        routes.remove(1, .tree, .property(rssi))
        #expect(routes.propertyRoute { $0 == rssi }?.handlers.map(\.id) == [2])
        routes.remove(2, .tree, .property(rssi))
        #expect(routes.properties.isEmpty)
    }
}
