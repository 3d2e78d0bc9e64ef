// BusHarness: a private dbus-daemon, a BlueZSimulator on it, and a raw D-Bus client.

import BlueZSimulator
import DBus
import Foundation
import TestSupport

/// One bus-tier test environment. `stop()` tears everything down.
final class BusHarness: Sendable {
    let bus: TestBus
    let simulator: BlueZSimulator
    let client: Connection
    /// Every signal org.bluez emitted since `start`, in arrival order.
    let signals = Collector<Message>()
    private let subscription: SignalSubscription

    /// `clock`: what times the simulator's delays (real time when nil); `profile`: the BlueZ
    /// release imitated.
    static func start(adapters: Int = 2, profile: BlueZProfile = .bluez5_66, clock: (any TimerClock)? = nil) async throws -> BusHarness {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: adapters, profile: profile, clock: clock)
        let client = try bus.connect()
        return try await BusHarness(bus: bus, simulator: simulator, client: client)
    }

    private init(bus: TestBus, simulator: BlueZSimulator, client: Connection) async throws {
        self.bus = bus
        self.simulator = simulator
        self.client = client
        let signals = self.signals
        subscription = client.subscribe(rule: MatchRule(sender: simulator.uniqueName)) { signals.append($0) }
        try await subscription.established()
    }

    /// Stops recording signals (for throughput measurements: the recorder is a slow consumer).
    func stopRecording() { subscription.cancel() }

    func stop() {
        subscription.cancel()
        simulator.stop()
        bus.stop()
    }

    // MARK: Calls

    /// Calls org.bluez with a short deadline.
    @discardableResult
    func call(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = [],
              on connection: Connection? = nil, timeout: Duration = .seconds(5)) async throws(DBusCallError) -> Message {
        try await (connection ?? client).call(destination: "org.bluez", path: try! ObjectPath(path), interface: interface,
                                              member: member, arguments: args, timeout: timeout)
    }

    /// The D-Bus error name of a failing call (nil on success).
    func error(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = [],
               on connection: Connection? = nil, timeout: Duration = .seconds(5)) async -> DBusRemoteError? {
        do { _ = try await call(path, interface, member, args, on: connection, timeout: timeout); return nil } catch {
            if case .remote(let e) = error { return e }
            return DBusRemoteError(name: "local", message: "\(error)")
        }
    }

    func get(_ path: String, _ interface: String, _ name: String) async throws -> DBusValue {
        let m = try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
        return m.body[0].unwrapped
    }

    func managedObjects() async throws -> [String: [String: [String: DBusValue]]] {
        let m = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        guard case .dict(_, _, let entries) = m.body[0] else { return [:] }
        var out: [String: [String: [String: DBusValue]]] = [:]
        for e in entries {
            guard case .objectPath(let p) = e.key, case .dict(_, _, let ifaces) = e.value else { continue }
            var m: [String: [String: DBusValue]] = [:]
            for i in ifaces {
                guard case .string(let name) = i.key, case .dict(_, _, let props) = i.value else { continue }
                var d: [String: DBusValue] = [:]
                for p in props { if case .string(let k) = p.key { d[k] = p.value.unwrapped } }
                m[name] = d
            }
            out[p.rawValue] = m
        }
        return out
    }

    /// Waits until a signal satisfying `match` has arrived; returns its index in `signals`.
    @discardableResult
    func waitSignal(timeout: Duration = .seconds(5), _ what: String, _ match: @escaping @Sendable (Message) -> Bool) async throws -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var seen = 0
        while true {
            let items = signals.items
            if let i = items.indices.first(where: { match(items[$0]) }) { return i }
            seen = items.count
            guard clock.now < deadline else { throw HarnessError("\(what): nothing within \(timeout)") }
            _ = try? await signals.wait(for: seen + 1, timeout: deadline - clock.now)
        }
    }

    /// Adds `peripheral`, starts discovery on hci0, waits for its device and returns its path.
    func discover(_ peripheral: SimulatedPeripheral) async throws -> String {
        simulator.add(peripheral)
        try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let path = BlueZPath.device(adapter: 0, address: peripheral.address)
        try await waitSignal("device added") { isAdded($0, path) }
        return path
    }

    /// Connects and waits for ServicesResolved=true.
    func connect(_ device: String) async throws {
        try await call(device, "org.bluez.Device1", "Connect")
        try await waitSignal("services resolved") { isChanged($0, device, "ServicesResolved", .bool(true)) }
    }

    /// The GATT object path with `uuid` under `device`.
    func gattPath(_ device: String, _ uuid: String) async throws -> String {
        let u = BluetoothUUID.normalize(uuid)!
        let objects = try await managedObjects()
        guard let p = objects.first(where: { $0.key.hasPrefix(device + "/") && ($0.value["org.bluez.GattCharacteristic1"]?["UUID"] == .string(u)
            || $0.value["org.bluez.GattDescriptor1"]?["UUID"] == .string(u)) })?.key else { throw HarnessError("no GATT object \(uuid) under \(device)") }
        return p
    }
}

// MARK: - Signal predicates (isAdded, isChanged, byteArray… are in TestSupport)

let noOptions = DBusValue.properties([:])

/// A harness wait or lookup failed.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
