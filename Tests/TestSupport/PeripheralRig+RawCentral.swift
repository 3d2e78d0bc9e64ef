// PeripheralRig+RawCentral: waits on what a recording PeripheralRig records, and the central side
// driven by raw D-Bus calls on hci0 (the virtual radio carries hci1's app to hci0).
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation

extension PeripheralRig {
    // MARK: Recorded (rigs started with `recording: true`)

    private var recorded: PeripheralRigRecorder {
        guard let recorder else { preconditionFailure("start the PeripheralRig with recording: true") }
        return recorder
    }

    /// Signals from org.bluez and from the peripheral's connection, in arrival order.
    public var signals: Collector<Message> { recorded.signals }
    /// The peripheral manager's states.
    public var states: Collector<ManagerState> { recorded.states }
    /// The peripheral manager's advertising changes.
    public var advertising: Collector<Bool> { recorded.advertising }

    /// Waits until the manager's state stream has delivered `state` (after index `from`).
    public func waitState(_ state: ManagerState, after from: Int = 0, timeout: Duration = .seconds(10)) async throws {
        try await waitItem(states, "state \(state)", after: from, timeout: timeout) { $0 == state }
    }

    /// Waits until `collector` has an item (at index ≥ `from`) matching; returns its index.
    @discardableResult
    public func waitItem<T: Sendable>(_ collector: Collector<T>, _ what: String, after from: Int = 0,
                                      timeout: Duration = .seconds(10), _ match: (T) -> Bool) async throws -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let items = collector.items
            if let i = items.indices.first(where: { $0 >= from && match(items[$0]) }) { return i }
            guard clock.now < deadline else { throw Missing(description: "\(what): nothing within \(timeout)") }
            _ = try? await collector.wait(for: items.count + 1, timeout: deadline - clock.now)
        }
    }

    /// Waits until a recorded signal (at index ≥ `from`) matches; returns its index.
    @discardableResult
    public func waitSignal(_ what: String, after from: Int = 0, timeout: Duration = .seconds(10),
                           _ match: (Message) -> Bool) async throws -> Int {
        try await waitItem(signals, what, after: from, timeout: timeout, match)
    }

    // MARK: Central side (raw D-Bus on hci0)

    /// Calls `member` on the central's connection (or `connection`), 5 s timeout.
    @discardableResult
    public func call(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = [],
                     on connection: Connection? = nil, destination: String = "org.bluez") async throws(DBusCallError) -> Message {
        try await (connection ?? centralConnection).call(destination: destination, path: try! ObjectPath(path), interface: interface,
                                                         member: member, arguments: args, timeout: .seconds(5))
    }

    /// The D-Bus error of a failing call (nil on success).
    public func error(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = [],
                      on connection: Connection? = nil, destination: String = "org.bluez") async -> DBusRemoteError? {
        do { _ = try await call(path, interface, member, args, on: connection, destination: destination); return nil } catch {
            if case .remote(let e) = error { return e }
            return DBusRemoteError(name: "local", message: "\(error)")
        }
    }

    /// hci1 as hci0 sees it.
    public var peripheralDevicePath: String { BlueZPath.device(adapter: 0, address: simulator.adapterAddress(1)!) }

    /// Starts discovery on hci0 and waits for hci1's device; returns its properties as first reported.
    public func discoverPeripheral(after from: Int = 0) async throws -> [String: DBusValue] {
        let path = peripheralDevicePath
        let start = signals.items.count
        try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let i = try await waitSignal("device \(path) found", after: min(from, start)) { isAdded($0, path) }
        return deviceProperties(signals.items[i])
    }

    /// Connects hci0 to hci1's device and waits for ServicesResolved.
    public func connectPeripheral() async throws {
        let path = peripheralDevicePath
        let from = signals.items.count
        try await call(path, "org.bluez.Device1", "Connect")
        try await waitSignal("services resolved", after: from) { isChanged($0, path, "ServicesResolved", .bool(true)) }
    }

    /// The characteristic with `uuid` under hci1's device on hci0.
    public func characteristicPath(_ uuid: BLEUUID) async throws -> String {
        let m = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        guard case .dict(_, _, let entries) = m.body[0] else { throw Missing(description: "no objects") }
        for e in entries {
            guard case .objectPath(let p) = e.key, p.rawValue.hasPrefix(peripheralDevicePath + "/"),
                  case .dict(_, _, let ifaces) = e.value else { continue }
            for i in ifaces where i.key == .string("org.bluez.GattCharacteristic1") {
                guard case .dict(_, _, let props) = i.value else { continue }
                if props.contains(where: { $0.key == .string("UUID") && $0.value.unwrapped == .string(uuid.uuidString) }) { return p.rawValue }
            }
        }
        throw Missing(description: "no characteristic \(uuid) under \(peripheralDevicePath)")
    }

    /// `ReadValue` on `path` from hci0.
    public func read(_ path: String, offset: UInt16 = 0) async throws -> [UInt8] {
        var o: [String: DBusValue] = [:]
        if offset > 0 { o["offset"] = .uint16(offset) }
        let m = try await call(path, "org.bluez.GattCharacteristic1", "ReadValue", [.properties(o)])
        return byteArray(m.body.first) ?? []
    }

    /// `WriteValue` on `path` from hci0; the D-Bus error, if any.
    public func write(_ path: String, _ bytes: [UInt8], offset: UInt16 = 0, type: String = "request") async -> DBusRemoteError? {
        var o: [String: DBusValue] = ["type": .string(type)]
        if offset > 0 { o["offset"] = .uint16(offset) }
        return await error(path, "org.bluez.GattCharacteristic1", "WriteValue", [bytesValue(bytes), .properties(o)])
    }
}
