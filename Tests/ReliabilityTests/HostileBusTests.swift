// Hostile D-Bus input: a fake org.bluez (our own exported objects on a connection owning the
// name) sending wrong types in replies, signals and properties. Ignored with a log line, no crash.
import BlueCapKit
import BlueZ
import DBus
import Foundation
import Futures
import Testing
import TestSupport
import Locking

/// A fake bluetoothd whose every answer can be made wrong.
final class FakeBlueZ: Sendable {
    let connection: Connection
    let handles: Locked<[ExportHandle]> = Locked([])

    static let managedType: DBusType = .dict(key: .objectPath, value: .dict(key: .string, value: .dict(key: .string, value: .variant)))

    /// A fake answering GetManagedObjects with `objects` (any signature).
    init(bus: TestBus, objects: [DBusValue]) async throws {
        connection = try bus.connect()
        let reply: @Sendable (MethodCall, Responder) -> Void = { _, r in r.succeed(objects) }
        let signature = DBusSignature(types: objects.map(\.type))
        try add([DBusInterface(name: "org.freedesktop.DBus.ObjectManager", methods: [
            DBusMethod("GetManagedObjects", output: signature, handler: reply),
        ])], at: "/")
        _ = try await connection.requestName("org.bluez")
    }

    func add(_ interfaces: [DBusInterface], at path: ObjectPath) throws {
        let h = try connection.export(interfaces, at: path)
        handles.withLock { $0.append(h) }
    }

    func signal(_ path: ObjectPath, _ interface: String, _ member: String, _ args: [DBusValue]) throws {
        try connection.emitSignal(path: path, interface: interface, member: member, arguments: args)
    }

    static func entry(_ path: ObjectPath, _ interface: String, _ props: [String: DBusValue]) -> DBusValue.DictEntry {
        .init(.objectPath(path), .dict(key: .string, value: .dict(key: .string, value: .variant),
                                       [.init(.string(interface), .properties(props))]))
    }

    static func managed(_ entries: [DBusValue.DictEntry]) -> DBusValue {
        .dict(key: .objectPath, value: .dict(key: .string, value: .dict(key: .string, value: .variant)), entries)
    }
}

/// Collects BlueZLog lines for the duration of a test.
final class LogLines: Sendable {
    let lines = Collector<String>()
    init() { BlueZLog.setObserver { [lines] in lines.append($0) } }
    func stop() { BlueZLog.setObserver(nil) }
    func contains(_ text: String) -> Bool { lines.items.contains { $0.contains(text) } }
}

@Suite("Reliability: hostile D-Bus input", .serialized, .timeLimit(.minutes(1)))
struct HostileBusTests {
    static let adapter: ObjectPath = "/org/bluez/hci0"
    static let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
    static let char: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0001/char0002"

    static func goodAdapter() -> [String: DBusValue] {
        ["Address": .string("00:AA:01:00:00:00"), "Powered": .bool(true), "Discovering": .bool(false), "Name": .string("fake")]
    }

    @Test("GetManagedObjects answered with the wrong signature: state unsupported, a log line, no crash")
    func managedObjectsWrongSignature() async throws {
        let log = LogLines()
        defer { log.stop() }
        let bus = try TestBus()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(bus: bus, objects: [.string("not a dict"), .int32(7)])
        _ = fake
        let manager = CentralManager(session: bus.session())
        let states = Collector<ManagerState>()
        manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        try await states.wait(for: 1)
        try await waitUntil("settled") { manager.state != .unknown }
        #expect(manager.state != .poweredOn)
        try await waitUntil("logged") { !log.lines.items.isEmpty }
        manager.reset()
    }

    @Test("garbage objects, signals, properties and replies from org.bluez are ignored with a log line; good input still works")
    func garbageEverywhere() async throws {
        let log = LogLines()
        defer { log.stop() }
        let bus = try TestBus()
        defer { bus.stop() }
        // The snapshot: a good adapter and a device whose every property has the wrong type.
        let badDevice: [String: DBusValue] = [
            "Address": .int32(5), "Name": .array(element: .byte, [.byte(1)]), "RSSI": .string("loud"),
            "Connected": .string("yes"), "UUIDs": .string("180d"), "ManufacturerData": .string("x"),
            "ServiceData": .int16(1), "Adapter": .string("/org/bluez/hci0"), "TxPower": .double(1.5),
        ]
        let snapshot = FakeBlueZ.managed([
            FakeBlueZ.entry(Self.adapter, "org.bluez.Adapter1", Self.goodAdapter()),
            FakeBlueZ.entry("/org/bluez/hci0/dev_00_00_00_00_00_BB", "org.bluez.Device1", badDevice),
        ])
        let fake = try await FakeBlueZ(bus: bus, objects: [snapshot])
        let ok: @Sendable (MethodCall, Responder) -> Void = { _, r in r.succeed() }
        try fake.add([DBusInterface(name: "org.bluez.Adapter1", methods: [
            DBusMethod("SetDiscoveryFilter", input: "a{sv}", handler: ok),
            DBusMethod("StartDiscovery", handler: ok),
            DBusMethod("StopDiscovery", handler: ok),
        ])], at: Self.adapter)
        let manager = CentralManager(session: bus.session())
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let found = Collector<Peripheral>()
        let scanEnded = Collector<String>()
        manager.startScanning().onComplete(context: .immediate) { r in
            switch r {
            case .success(let p): found.append(p)
            case .failure(let e): scanEnded.append("\(e)")
            }
        }
        // Signals with wrong shapes and types.
        try fake.signal("/", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", [.string("oops"), .int32(1)])
        try fake.signal("/", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", [.objectPath(Self.device), .string("not a map")])
        try fake.signal("/", "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", [.objectPath(Self.device), .int64(9)])
        try fake.signal(Self.adapter, "org.freedesktop.DBus.Properties", "PropertiesChanged", [.int32(1)])
        try fake.signal(Self.adapter, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                        [.string("org.bluez.Adapter1"), .properties(["Powered": .string("off"), "Discovering": .array(element: .bool, [])]),
                         .array(element: .string, [])])
        // Then a good device.
        let goodDevice: [String: DBusValue] = [
            "Address": .string("C0:FF:EE:00:00:01"), "Name": .string("Good"), "RSSI": .int16(-40), "Connected": .bool(false),
            "Adapter": .objectPath(Self.adapter), "UUIDs": .array(element: .string, []),
        ]
        try fake.signal("/", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded",
                        [.objectPath(Self.device), .dict(key: .string, value: .dict(key: .string, value: .variant),
                                                         [.init(.string("org.bluez.Device1"), .properties(goodDevice))])])
        try await waitUntil("good device found (scan ended: \(scanEnded.items))") { found.items.contains { $0.address == "C0:FF:EE:00:00:01" } }
        let good = try need(found.items.first { $0.address == "C0:FF:EE:00:00:01" }, "good device")
        #expect(good.rssi == -40)
        #expect(manager.state == .poweredOn)  // "Powered": "off" (a string) was ignored
        // Wrong types on the good device: ignored, last good values kept.
        try fake.signal(Self.device, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                        [.string("org.bluez.Device1"), .properties(["RSSI": .string("-10"), "Connected": .array(element: .int32, [])]),
                         .array(element: .string, [])])
        try fake.signal(Self.device, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                        [.string("org.bluez.Device1"), .properties(["Name": .string("Still good")]), .array(element: .string, [])])
        try await waitUntil("name update") { good.name == "Still good" }
        #expect(good.rssi == -40)
        #expect(!good.isConnected)
        // The garbage device, if listed at all, has no address-derived nonsense.
        for p in found.items where p.address != "C0:FF:EE:00:00:01" { #expect(p.rssi == nil) }
        #expect(log.contains("ignored"), "log lines: \(log.lines.items.prefix(5))")
        manager.reset()
    }

    @Test("replies with wrong signatures to Connect, ReadValue and AcquireNotify fail those calls with invalidReply, no crash")
    func wrongReplySignatures() async throws {
        let log = LogLines()
        defer { log.stop() }
        let bus = try TestBus()
        defer { bus.stop() }
        let device: [String: DBusValue] = [
            "Address": .string("C0:FF:EE:00:00:01"), "Connected": .bool(true), "ServicesResolved": .bool(true),
            "Adapter": .objectPath(Self.adapter), "UUIDs": .array(element: .string, [.string(AccelerometerUUIDs.service.uuidString)]),
        ]
        let service: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0001"
        let snapshot = FakeBlueZ.managed([
            FakeBlueZ.entry(Self.adapter, "org.bluez.Adapter1", Self.goodAdapter()),
            FakeBlueZ.entry(Self.device, "org.bluez.Device1", device),
            FakeBlueZ.entry(service, "org.bluez.GattService1", ["UUID": .string(AccelerometerUUIDs.service.uuidString), "Primary": .bool(true),
                                                                 "Device": .objectPath(Self.device)]),
            FakeBlueZ.entry(Self.char, "org.bluez.GattCharacteristic1", [
                "UUID": .string(AccelerometerUUIDs.data.uuidString), "Service": .objectPath(service),
                "Flags": .array(element: .string, [.string("read"), .string("write"), .string("notify")]),
            ]),
        ])
        let fake = try await FakeBlueZ(bus: bus, objects: [snapshot])
        try fake.add([DBusInterface(name: "org.bluez.Device1", methods: [
            DBusMethod("Connect", output: "s", handler: { _, r in r.succeed([.string("??")]) }),
            DBusMethod("Disconnect", handler: { _, r in r.succeed() }),
        ])], at: Self.device)
        try fake.add([DBusInterface(name: "org.bluez.GattCharacteristic1", methods: [
            DBusMethod("ReadValue", input: "a{sv}", output: "s", handler: { _, r in r.succeed([.string("not bytes")]) }),
            DBusMethod("WriteValue", input: "aya{sv}", output: "u", handler: { _, r in r.succeed([.uint32(1)]) }),
            DBusMethod("AcquireNotify", input: "a{sv}", output: "s", handler: { _, r in r.succeed([.string("no fd")]) }),
            DBusMethod("StartNotify", output: "i", handler: { _, r in r.succeed([.int32(1)]) }),
            DBusMethod("StopNotify", handler: { _, r in r.succeed() }),
        ])], at: Self.char)
        let manager = CentralManager(session: bus.session())
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let p = try need(manager.retrievePeripherals(withAddresses: ["C0:FF:EE:00:00:01"]).first, "known device")
        _ = try await p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(3)).value
        let c = try need(p.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.data), "characteristic")
        let read = try #require(try await failure(of: c.read(timeout: .seconds(3))) as? PeripheralError)
        #expect(read.bluez?.kind == .invalidReply, "\(read)")
        #expect(read.description.contains("ReadValue"))
        // Extra reply values where none are documented are tolerated; a missing fd is not.
        _ = try? await c.write(data: Data([1]), timeout: .seconds(3)).value
        let notify = try await failure(of: c.startNotifying(timeout: .seconds(3)))
        #expect(notify == nil || notify is PeripheralError)
        #expect(c.notificationTransport != .acquiredSocket)
        let events = Collector<String>()
        p.connect(connectionTimeout: .seconds(2)).onComplete(context: .immediate) { r in
            switch r {
            case .success(let e): events.append("\(e.connectionEvent)")
            case .failure(let e): events.append("\(e)")
            }
        }
        try await events.wait(for: 1, timeout: .seconds(5))
        manager.reset()
    }
}
