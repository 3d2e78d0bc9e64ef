// PeripheralHarness: a PeripheralRig (private bus, BlueZSimulator with two linked adapters,
// PeripheralManager on hci1) driven from hci0 by raw D-Bus calls on the rig's central connection
// (the virtual radio carries hci1's app to hci0).

import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import TestSupport

final class PeripheralHarness: Sendable {
    let rig: PeripheralRig
    /// Signals from org.bluez and from the peripheral's connection, in arrival order.
    let signals = Collector<Message>()
    let states = Collector<ManagerState>()
    let advertising = Collector<Bool>()
    private let subscriptions: [SignalSubscription]

    static func start() async throws -> PeripheralHarness {
        let h = try await PeripheralHarness(rig: PeripheralRig.start())
        try await h.waitState(.poweredOn)
        return h
    }

    private init(rig: PeripheralRig) async throws {
        self.rig = rig
        let signals = self.signals
        let a = rig.centralConnection.subscribe(rule: MatchRule(sender: "org.bluez")) { signals.append($0) }
        let b = rig.centralConnection.subscribe(rule: MatchRule(sender: rig.peripheralConnection.uniqueName)) { signals.append($0) }
        try await a.established()
        try await b.established()
        subscriptions = [a, b]
        let states = self.states, advertising = self.advertising
        rig.peripheralManager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        rig.peripheralManager.whenAdvertisingChanges().onSuccess(context: .immediate) { advertising.append($0) }
    }

    var bus: TestBus { rig.bus }
    var simulator: BlueZSimulator { rig.simulator }
    var peripheralConnection: Connection { rig.peripheralConnection }
    /// The peripheral manager under test, on hci1.
    var manager: PeripheralManager { rig.peripheralManager }
    /// The raw D-Bus central, on hci0.
    var central: Connection { rig.centralConnection }

    func stop() async {
        for s in subscriptions { s.cancel() }
        await rig.stop()
    }

    // MARK: Waiting

    /// Waits until the manager's state stream has delivered `state` (after index `from`).
    func waitState(_ state: ManagerState, after from: Int = 0, timeout: Duration = .seconds(10)) async throws {
        try await waitItem(states, "state \(state)", after: from, timeout: timeout) { $0 == state }
    }

    /// Waits until `collector` has an item (at index ≥ `from`) matching; returns its index.
    @discardableResult
    func waitItem<T: Sendable>(_ collector: Collector<T>, _ what: String, after from: Int = 0, timeout: Duration = .seconds(10),
                               _ match: (T) -> Bool) async throws -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let items = collector.items
            if let i = items.indices.first(where: { $0 >= from && match(items[$0]) }) { return i }
            guard clock.now < deadline else { throw PeripheralTestError("\(what): nothing within \(timeout)") }
            _ = try? await collector.wait(for: items.count + 1, timeout: deadline - clock.now)
        }
    }

    @discardableResult
    func waitSignal(_ what: String, after from: Int = 0, timeout: Duration = .seconds(10),
                    _ match: (Message) -> Bool) async throws -> Int {
        try await waitItem(signals, what, after: from, timeout: timeout, match)
    }

    // MARK: Central side (raw D-Bus on hci0)

    @discardableResult
    func call(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = [],
              on connection: Connection? = nil, destination: String = "org.bluez") async throws(DBusCallError) -> Message {
        try await (connection ?? central).call(destination: destination, path: try! ObjectPath(path), interface: interface,
                                               member: member, arguments: args, timeout: .seconds(5))
    }

    /// The D-Bus error of a failing call (nil on success).
    func error(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = [],
               on connection: Connection? = nil, destination: String = "org.bluez") async -> DBusRemoteError? {
        do { _ = try await call(path, interface, member, args, on: connection, destination: destination); return nil } catch {
            if case .remote(let e) = error { return e }
            return DBusRemoteError(name: "local", message: "\(error)")
        }
    }

    /// hci1 as hci0 sees it.
    var peripheralDevicePath: String { BlueZPath.device(adapter: 0, address: simulator.adapterAddress(1)!) }

    /// Starts discovery on hci0 and waits for hci1's device; returns its properties as first reported.
    func discoverPeripheral(after from: Int = 0) async throws -> [String: DBusValue] {
        let path = peripheralDevicePath
        let start = signals.items.count
        try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let i = try await waitSignal("device \(path) found", after: min(from, start)) { isAdded($0, path) }
        return deviceProperties(signals.items[i])
    }

    func connectPeripheral() async throws {
        let path = peripheralDevicePath
        let from = signals.items.count
        try await call(path, "org.bluez.Device1", "Connect")
        try await waitSignal("services resolved", after: from) { isChanged($0, path, "ServicesResolved", .bool(true)) }
    }

    /// The characteristic with `uuid` under hci1's device on hci0.
    func characteristicPath(_ uuid: BLEUUID) async throws -> String {
        let m = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        guard case .dict(_, _, let entries) = m.body[0] else { throw PeripheralTestError("no objects") }
        for e in entries {
            guard case .objectPath(let p) = e.key, p.rawValue.hasPrefix(peripheralDevicePath + "/"),
                  case .dict(_, _, let ifaces) = e.value else { continue }
            for i in ifaces where i.key == .string("org.bluez.GattCharacteristic1") {
                guard case .dict(_, _, let props) = i.value else { continue }
                if props.contains(where: { $0.key == .string("UUID") && $0.value.unwrapped == .string(uuid.uuidString) }) { return p.rawValue }
            }
        }
        throw PeripheralTestError("no characteristic \(uuid) under \(peripheralDevicePath)")
    }

    func read(_ path: String, offset: UInt16 = 0) async throws -> [UInt8] {
        var o: [String: DBusValue] = [:]
        if offset > 0 { o["offset"] = .uint16(offset) }
        let m = try await call(path, "org.bluez.GattCharacteristic1", "ReadValue", [.properties(o)])
        return byteArray(m.body.first) ?? []
    }

    func write(_ path: String, _ bytes: [UInt8], offset: UInt16 = 0, type: String = "request") async -> DBusRemoteError? {
        var o: [String: DBusValue] = ["type": .string(type)]
        if offset > 0 { o["offset"] = .uint16(offset) }
        return await error(path, "org.bluez.GattCharacteristic1", "WriteValue", [bytesValue(bytes), .properties(o)])
    }
}

// MARK: - Helpers

func withDeadlineOrNil(_ timeout: Duration = .seconds(5), _ body: @escaping @Sendable () async -> Void) async {
    _ = try? await withDeadline(timeout, "cleanup") { await body(); return true }
}

/// Device1's properties from an InterfacesAdded signal.
func deviceProperties(_ m: Message) -> [String: DBusValue] {
    guard m.body.count == 2, case .dict(_, _, let ifaces) = m.body[1] else { return [:] }
    for i in ifaces where i.key == .string("org.bluez.Device1") {
        guard case .dict(_, _, let props) = i.value else { continue }
        var d: [String: DBusValue] = [:]
        for p in props { if case .string(let k) = p.key { d[k] = p.value.unwrapped } }
        return d
    }
    return [:]
}

/// Collects a FutureStream's values for awaiting with a deadline.
func collect<T: Sendable>(_ stream: FutureStream<T>) -> Collector<T> {
    let c = Collector<T>()
    stream.onSuccess(context: .immediate) { c.append($0) }
    return c
}

/// A harness wait or lookup failed.
struct PeripheralTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
