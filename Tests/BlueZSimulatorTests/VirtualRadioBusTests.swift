// VirtualRadioBusTests: an application and advertisement registered on hci1 by one bus client,
// discovered and used from hci0 by another, every GATT call forwarded to the application.

import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

/// What the test application saw.
final class AppLog: Sendable {
    let calls = Collector<String>()
    let options = Collector<[String: DBusValue]>()

    /// Waits (≤ 5 s) until the application has received `name`.
    func waitForCall(_ name: String) async throws {
        try await calls.wait(until: { $0.contains(name) }, timeout: .seconds(5))
    }
}

/// Exports a GATT application (one service, one read/write/notify characteristic) and an
/// advertisement on `connection`, callable only by `bluetoothd`.
func exportTestApp(on connection: Connection, bluetoothd: String, log: AppLog) throws -> [ExportHandle] {
    let char: ObjectPath = "/app/service0/char0"
    @Sendable func options(_ call: MethodCall) -> [String: DBusValue] {
        guard case .dict(_, _, let entries)? = call.body.last else { return [:] }
        var d: [String: DBusValue] = [:]
        for e in entries { if case .string(let k) = e.key { d[k] = e.value.unwrapped } }
        return d
    }
    let chrc = DBusInterface(name: "org.bluez.GattCharacteristic1", methods: [
        DBusMethod("ReadValue", input: "a{sv}", output: "ay") { call, r in
            log.calls.append("ReadValue")
            log.options.append(options(call))
            if options(call)["offset"] == .uint16(1) {
                return r.fail(name: "org.bluez.Error.NotPermitted", message: "no")
            }
            r.succeed([bytesValue([0x42, 0x43])])
        },
        DBusMethod("WriteValue", input: "aya{sv}") { call, r in
            log.calls.append("WriteValue \(byteArray(call.body.first) ?? [])")
            log.options.append(options(call))
            if byteArray(call.body.first) == [0xFF] { return r.fail(name: "org.bluez.Error.InvalidValueLength", message: "too long") }
            r.succeed()
        },
        DBusMethod("StartNotify") { _, r in log.calls.append("StartNotify"); r.succeed() },
        DBusMethod("StopNotify") { _, r in log.calls.append("StopNotify"); r.succeed() },
    ], properties: [
        DBusProperty("UUID", type: .string, value: .string("f000aa11-0451-4000-b000-000000000000")),
        DBusProperty("Service", type: .objectPath, value: .objectPath("/app/service0")),
        DBusProperty("Flags", type: .array(.string), value: .array(element: .string, ["read", "write", "notify"].map { .string($0) })),
        DBusProperty("Value", type: .array(.byte), value: bytesValue([])),
    ])
    let service = DBusInterface(name: "org.bluez.GattService1", properties: [
        DBusProperty("UUID", type: .string, value: .string("f000aa10-0451-4000-b000-000000000000")),
        DBusProperty("Primary", type: .bool, value: .bool(true)),
    ])
    let advertisement = DBusInterface(name: "org.bluez.LEAdvertisement1", methods: [
        DBusMethod("Release") { _, r in log.calls.append("Release"); r.succeed() },
    ], properties: [
        DBusProperty("Type", type: .string, value: .string("peripheral")),
        DBusProperty("LocalName", type: .string, value: .string("Accel")),
        DBusProperty("ServiceUUIDs", type: .array(.string), value: .array(element: .string, [.string("F000AA10-0451-4000-B000-000000000000")])),
        DBusProperty("ManufacturerData", type: .dict(key: .uint16, value: .variant),
                      value: .dict(key: .uint16, value: .variant, [.init(.uint16(0x000D), .variant(bytesValue([7])))])),
    ])
    return [
        try connection.exportObjectManager(at: "/app", allowedCaller: bluetoothd),
        try connection.export([service], at: "/app/service0", allowedCaller: bluetoothd),
        try connection.export([chrc], at: char, allowedCaller: bluetoothd),
        try connection.export([advertisement], at: "/adv0", allowedCaller: bluetoothd),
    ]
}

@Suite("Virtual radio over D-Bus", .serialized, .timeLimit(.minutes(1)))
struct VirtualRadioBusTests {
    @Test("an app + advertisement on hci1 is discovered, read, written and notified from hci0")
    func appSeenFromOtherAdapter() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let app = try h.bus.connect()
        let log = AppLog()
        let handles = try exportTestApp(on: app, bluetoothd: h.simulator.uniqueName, log: log)
        try await h.call("/org/bluez/hci1", "org.bluez.GattManager1", "RegisterApplication", [.objectPath("/app"), noOptions], on: app)
        try await h.call("/org/bluez/hci1", "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement", [.objectPath("/adv0"), noOptions], on: app)
        #expect(try await h.get("/org/bluez/hci1", "org.bluez.LEAdvertisingManager1", "ActiveInstances") == .byte(1))

        try await h.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let hci1Address = try #require(h.simulator.adapterAddress(1))
        let device = BlueZPath.device(adapter: 0, address: hci1Address)
        try await h.waitSignal("peripheral adapter seen") { isAdded($0, device) }
        #expect(try await h.get(device, "org.bluez.Device1", "Name") == .string("Accel"))
        #expect(try await h.get(device, "org.bluez.Device1", "UUIDs") == .array(element: .string, [.string("f000aa10-0451-4000-b000-000000000000")]))
        try await h.connect(device)
        let data = try await h.gattPath(device, "F000AA11-0451-4000-B000-000000000000")

        let read = try await h.call(data, "org.bluez.GattCharacteristic1", "ReadValue", [noOptions])
        #expect(byteArray(read.body.first) == [0x42, 0x43])
        let central = BlueZPath.device(adapter: 1, address: try #require(h.simulator.adapterAddress(0)))
        let opts = try await log.options.wait(for: 1)[0]
        #expect(opts["device"] == .objectPath(try ObjectPath(central)))
        #expect(opts["link"] == .string("LE"))
        #expect(opts["mtu"] == .uint16(517))
        #expect(try await h.get(central, "org.bluez.Device1", "Connected") == .bool(true))
        #expect(await h.error(data, "org.bluez.GattCharacteristic1", "ReadValue", [.properties(["offset": .uint16(1)])])
                == DBusRemoteError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted"))

        try await h.call(data, "org.bluez.GattCharacteristic1", "WriteValue", [bytesValue([1]), noOptions])
        #expect(await h.error(data, "org.bluez.GattCharacteristic1", "WriteValue", [bytesValue([0xFF]), noOptions])
                == DBusRemoteError(name: "org.bluez.Error.InvalidArguments", message: "Invalid Length"))
        #expect(log.calls.items.contains("WriteValue [1]"))

        try await h.call(data, "org.bluez.GattCharacteristic1", "StartNotify")
        try await log.waitForCall("StartNotify")
        try handles[2].setProperties(["Value": bytesValue([9, 8, 7])], interface: "org.bluez.GattCharacteristic1")
        try await h.waitSignal("notification on hci0") { isChanged($0, data, "Value", bytesValue([9, 8, 7])) }

        // The app leaves the bus: its registrations are dropped.
        app.close()
        try await h.waitSignal("advertisement dropped") { isChanged($0, "/org/bluez/hci1", "ActiveInstances", .byte(0)) }
        _ = handles
    }

    @Test("powering the peripheral adapter off releases its advertisement and drops the link")
    func powerOffReleasesAdvertisement() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let app = try h.bus.connect()
        let log = AppLog()
        let handles = try exportTestApp(on: app, bluetoothd: h.simulator.uniqueName, log: log)
        try await h.call("/org/bluez/hci1", "org.bluez.GattManager1", "RegisterApplication", [.objectPath("/app"), noOptions], on: app)
        try await h.call("/org/bluez/hci1", "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement", [.objectPath("/adv0"), noOptions], on: app)
        #expect(await h.error("/org/bluez/hci1", "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement",
                              [.objectPath("/adv0"), noOptions], on: app)?.name == "org.bluez.Error.AlreadyExists")
        try await h.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let device = BlueZPath.device(adapter: 0, address: try #require(h.simulator.adapterAddress(1)))
        try await h.waitSignal("seen") { isAdded($0, device) }
        try await h.connect(device)
        h.simulator.setPowered(adapter: 1, false)
        try await h.waitSignal("link dropped") { isChanged($0, device, "Connected", .bool(false)) }
        try await log.waitForCall("Release")
        _ = handles
    }

    @Test("a python-dbus client discovers, connects, reads and gets a notification")
    func pythonClient() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        h.simulator.load(try Scenario.decode(Data(testScenarioJSON.utf8)))
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("bluez-sim-client-\(getpid()).py")
        try pythonClientScript.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let run = try await runPython([script.path, h.bus.address, "C0:FF:EE:00:00:01"])
        let result = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(run.status == 0)
        #expect(result?["name"] as? String == "Pulse")
        #expect(result?["rssi"] as? Int == -50)
        #expect(result?["read"] as? [Int] == [1])
        #expect(result?["notifications"] as? Int == 1)
    }
}
