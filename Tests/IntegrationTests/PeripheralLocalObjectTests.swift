// The exported GATT objects answered directly by a stand-in for bluetoothd: exact
// org.bluez.Error.* replies, reply timing, timeouts.

import BlueZ
import DBus
import Foundation
import Testing
import TestSupport
import Timing

@Suite("Peripheral role: exported GATT objects' replies to bluetoothd", .serialized)
struct PeripheralLocalObjectTests {
    /// A fake bluetoothd (owning org.bluez with a GattManager1) and an application connection.
    struct Setup {
        let bus: TestBus
        let bluez: Connection
        let app: Connection
        let manager: ExportHandle

        init() async throws {
            bus = try TestBus()
            bluez = try bus.connect()
            app = try bus.connect()
            _ = try await bluez.requestName("org.bluez")
            let ok: @Sendable (MethodCall, Responder) -> Void = { _, r in r.succeed() }
            manager = try bluez.export([DBusInterface(name: "org.bluez.GattManager1", methods: [
                DBusMethod("RegisterApplication", input: "oa{sv}", handler: ok),
                DBusMethod("UnregisterApplication", input: "o", handler: ok),
            ])], at: "/org/bluez/hci0")
        }

        func register(_ chars: [LocalGattCharacteristic]) async throws -> GattApplicationHandle {
            try await GattApplication(root: "/test/app", services: [LocalGattService(uuid: "180f", characteristics: chars)])
                .register(on: app, adapter: "/org/bluez/hci0", allowedCaller: bluez.uniqueName)
        }

        /// Calls characteristic `m` of the app as bluetoothd; the D-Bus error, or the reply.
        func call(_ m: Int, _ member: String, _ args: [DBusValue], interface: String = "org.bluez.GattCharacteristic1",
                  timeout: Duration = .seconds(5)) async -> Result<Message, DBusCallError> {
            do {
                return .success(try await bluez.call(destination: app.uniqueName, path: try ObjectPath("/test/app/service0/char\(m)"),
                                                     interface: interface, member: member, arguments: args, timeout: timeout))
            } catch let e as DBusCallError { return .failure(e) } catch { return .failure(.invalidMessage("\(error)")) }
        }

        func stop() { bus.stop() }
    }

    static func bytes(_ b: [UInt8]) -> DBusValue { .array(element: .byte, b.map { .byte($0) }) }

    @Test("bad requests get InvalidValueLength, InvalidOffset, NotPermitted and NotSupported")
    func errorReplies() async throws {
        let s = try await Setup()
        defer { s.stop() }
        let rw = LocalGattCharacteristic(uuid: "2a19", flags: ["read", "write"], value: Data([1, 2, 3]), maxLength: 4)
        let readOnly = LocalGattCharacteristic(uuid: "2a1a", flags: ["read"], value: Data([9]))
        let writeOnly = LocalGattCharacteristic(uuid: "2a1b", flags: ["write"])
        let handle = try await s.register([rw, readOnly, writeOnly])
        defer { Task { await handle.unregister() } }

        func name(_ r: Result<Message, DBusCallError>) -> String? { if case .failure(let e) = r { e.remoteName } else { nil } }
        #expect(name(await s.call(0, "WriteValue", [Self.bytes([1, 2, 3, 4, 5]), .properties([:])])) == "org.bluez.Error.InvalidValueLength")
        #expect(name(await s.call(0, "WriteValue", [Self.bytes([7, 7]), .properties(["offset": .uint16(3)])])) == "org.bluez.Error.InvalidValueLength")
        #expect(name(await s.call(0, "WriteValue", [Self.bytes([7]), .properties(["offset": .uint16(4)])])) == "org.bluez.Error.InvalidOffset")
        #expect(name(await s.call(0, "ReadValue", [.properties(["offset": .uint16(4)])])) == "org.bluez.Error.InvalidOffset")
        #expect(name(await s.call(1, "WriteValue", [Self.bytes([1]), .properties([:])])) == "org.bluez.Error.NotPermitted")
        #expect(name(await s.call(2, "ReadValue", [.properties([:])])) == "org.bluez.Error.NotPermitted")
        #expect(name(await s.call(0, "StartNotify", [])) == "org.bluez.Error.NotSupported")
        #expect(name(await s.call(0, "AcquireNotify", [.properties([:])])) == "org.bluez.Error.NotSupported")
        #expect(name(await s.call(0, "ReadValue", [.properties(["offset": .string("x")])])) == "org.bluez.Error.InvalidArguments")
        #expect(rw.value == Data([1, 2, 3]), "refused writes change nothing")
        #expect(readOnly.value == Data([9]))

        // A write at the offset keeps the head and replaces the rest; reads honour the offset.
        #expect(name(await s.call(0, "WriteValue", [Self.bytes([8, 9]), .properties(["offset": .uint16(2)])])) == nil)
        #expect(rw.value == Data([1, 2, 8, 9]))
        guard case .success(let m) = await s.call(0, "ReadValue", [.properties(["offset": .uint16(1)])]) else {
            Issue.record("read failed")
            return
        }
        #expect(m.body.first == Self.bytes([2, 8, 9]))
    }

    @Test("the reply waits for the application's answer; an unanswered request fails with Failed \"timeout\"")
    func replyTiming() async throws {
        let s = try await Setup()
        defer { s.stop() }
        // The request timeout runs on a manual clock: it falls due when the test advances it.
        let clock = ManualClock()
        let c = LocalGattCharacteristic(uuid: "2a19", flags: ["read", "write"], value: Data([5]), requestTimeout: .milliseconds(300))
        c.clock = clock
        let delayed = LocalGattCharacteristic(uuid: "2a1a", flags: ["read", "write"], value: Data([6]))
        let seen = Collector<GattServerRequest>()
        c.setWriteHandler { seen.append($0) }  // never answered: the timeout replies
        let held = Collector<GattServerRequest>()
        delayed.setWriteHandler { held.append($0) }  // answered by the test, once it has checked
        let handle = try await s.register([c, delayed])
        defer { Task { await handle.unregister() } }

        let replied = Collector<Bool>()
        async let r = { () async -> Result<Message, DBusCallError> in
            let r = await s.call(1, "WriteValue", [Self.bytes([1]), .properties(["device": .objectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"),
                                                                                 "type": .string("request"), "mtu": .uint16(247)])])
            replied.append(true)
            return r
        }()
        let pending = try await held.wait(for: 1)[0]
        // The handler has the request and has not answered: neither has the object.
        #expect(replied.items.isEmpty, "not replied before the application answered")
        pending.fail(BlueZError(kind: .notAuthorized, message: "no"))
        if case .failure(.remote(let e)) = await r { #expect(e.name == "org.bluez.Error.NotAuthorized") } else { Issue.record("got \(await r)") }
        #expect(delayed.value == Data([6]))

        async let t = s.call(0, "WriteValue", [Self.bytes([2]), .properties(["type": .string("command")])])
        let request = try await seen.wait(for: 1, timeout: .seconds(2))[0]
        clock.advance(by: .milliseconds(299))
        #expect(!request.isAnswered, "answered before the request timeout")
        clock.advance(by: .milliseconds(1))
        #expect(request.isAnswered)
        if case .failure(.remote(let e)) = await t {
            // Not Failed (ATT 0x80, an application error): a name bluetoothd answers as 0x0E.
            #expect(e.name == ATTError.unlikelyErrorName)
            #expect(e.message.contains("did not answer within"))
        } else { Issue.record("got \(await t)") }
        #expect(request.options.writeType == .command)
        #expect(request.isAnswered)
        #expect(!request.succeed(), "answering after the timeout is ignored")
        #expect(c.value == Data([5]))
    }
}
