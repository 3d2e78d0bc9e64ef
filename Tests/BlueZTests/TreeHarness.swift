// TreeHarness: a private bus, a BlueZSimulator and an ObjectTree on a client connection.
import BlueZ
import BlueZSimulator
import DBus
import Foundation
import TestSupport

final class TreeHarness: Sendable {
    let bus: TestBus
    let simulator: BlueZSimulator
    let client: Connection
    let tree: ObjectTree
    let events = Collector<ObjectTreeEvent>()
    private let observation: ObjectTreeObservation

    static func start(adapters: Int = 2) async throws -> TreeHarness {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: adapters)
        return try TreeHarness(bus: bus, simulator: simulator)
    }

    private init(bus: TestBus, simulator: BlueZSimulator) throws {
        self.bus = bus
        self.simulator = simulator
        client = try bus.connect()
        tree = ObjectTree(connection: client)
        let events = self.events
        observation = tree.observe { events.append($0) }
        tree.start()
    }

    func stop() {
        observation.cancel()
        tree.stop()
        simulator.stop()
        bus.stop()
    }

    /// Waits, event by event, until `condition` holds.
    func waitUntil(_ what: String, timeout: Duration = .seconds(5), _ condition: @escaping @Sendable () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !condition() {
            guard clock.now < deadline else { throw WaitTimedOut(what: what, after: timeout) }
            let seen = events.items.count
            _ = try? await events.wait(for: seen + 1, timeout: deadline - clock.now)
        }
    }

    /// GetManagedObjects straight from the simulator, variants unwrapped.
    func managedObjects() async throws -> [ObjectPath: InterfaceProperties] {
        let m = try await client.call(destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                                      member: "GetManagedObjects", timeout: .seconds(5))
        guard case .dict(_, _, let entries)? = m.body.first else { return [:] }
        var out: [ObjectPath: InterfaceProperties] = [:]
        for e in entries {
            guard case .objectPath(let p) = e.key, case .dict(_, _, let ifaces) = e.value else { continue }
            var m: InterfaceProperties = [:]
            for i in ifaces {
                guard case .string(let name) = i.key, case .dict(_, _, let props) = i.value else { continue }
                var d: [String: DBusValue] = [:]
                for p in props { if case .string(let k) = p.key { d[k] = p.value.unwrapped } }
                m[name] = d
            }
            out[p] = m
        }
        return out
    }

    func call(_ path: ObjectPath, _ interface: String, _ member: String) async throws {
        _ = try await client.call(destination: "org.bluez", path: path, interface: interface, member: member, timeout: .seconds(5))
    }
}

struct WaitTimedOut: Error, CustomStringConvertible {
    let what: String
    let after: Duration
    var description: String { "\(what): not within \(after)" }
}
