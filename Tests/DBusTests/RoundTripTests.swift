import DBus
import Foundation
import Glibc
import Testing
import TestSupport

/// An echo object: returns its arguments unchanged, whatever their signature.
func echoInterface(signature: DBusSignature) -> DBusInterface {
    DBusInterface(name: "org.bluecap.Test", methods: [
        DBusMethod("Echo", input: signature, output: signature) { call, responder in responder.succeed(call.body) },
    ])
}

@Suite("Round trips through a real bus")
struct RoundTripTests {
    static let samples: [DBusValue] = [
        .byte(0xFE), .bool(true), .bool(false), .int16(-12345), .uint16(54321), .int32(-7), .uint32(4_000_000_000),
        .int64(Int64.min), .uint64(UInt64.max), .double(3.25), .string("héllo ✓"), .objectPath("/org/bluez/hci0"),
        .signature("a{sv}(ii)"),
        .array(element: .byte, [.byte(1), .byte(2), .byte(3)]),
        .array(element: .string, []),
        .array(element: .array(.int32), [.array(element: .int32, [.int32(1), .int32(2)]), .array(element: .int32, [])]),
        .dict(key: .string, value: .variant, [.init(.string("a"), .variant(.uint16(1))), .init(.string("b"), .variant(.string("x")))]),
        .dict(key: .uint16, value: .variant, [.init(.uint16(76), .variant(.array(element: .byte, [.byte(9)])))]),
        .dict(key: .objectPath, value: .dict(key: .string, value: .int32), []),
        .struct([.int32(1), .string("two"), .struct([.double(3.0), .array(element: .bool, [.bool(true)])])]),
        .variant(.variant(.variant(.int64(42)))),
        .array(element: .variant, [.variant(.string("s")), .variant(.struct([.byte(1)]))]),
    ]

    @Test("every D-Bus type survives a call to an echo object and back", arguments: samples)
    func echoesEveryType(value: DBusValue) async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let handle = try server.export([echoInterface(signature: DBusSignature(types: [value.type]))], at: "/echo")
            defer { handle.unexport() }
            let reply = try await client.call(destination: server.uniqueName, path: "/echo", interface: "org.bluecap.Test",
                                              member: "Echo", arguments: [value])
            #expect(reply.body == [value])
            #expect(reply.signature == value.signature)
        }
    }

    @Test("typed decoding reads scalars, a{sv}, a{qv} and ay, and throws on mismatch")
    func typedDecoding() throws {
        let props = DBusValue.properties(["Name": .string("dev"), "RSSI": .int16(-40)])
        let dict = try props.as([String: DBusValue].self)
        #expect(try dict["Name"].as(String.self) == "dev")
        #expect(try dict["RSSI"].as(Int16.self) == -40)
        #expect(throws: DBusDecodingError.self) { try dict["RSSI"].as(String.self) }
        #expect(throws: DBusDecodingError.self) { try dict["Missing"].as(String.self) }
        let mfr = [UInt16(76): DBusValue.array(element: .byte, [.byte(1), .byte(2)])].dbusValue
        #expect(mfr.signature == "a{qv}")
        #expect(try mfr.as([UInt16: DBusValue].self)[76].as([UInt8].self) == [1, 2])
        #expect(try mfr.as([UInt16: DBusValue].self)[76].as(Data.self) == Data([1, 2]))
        let args: [DBusValue] = [.string("a"), .uint32(5)]
        #expect(try args.decode(UInt32.self, at: 1) == 5)
        #expect(throws: DBusDecodingError.self) { try args.decode(UInt32.self, at: 0) }
        #expect(throws: DBusDecodingError.self) { try args.decode(String.self, at: 2) }
        #expect([String]().dbusValue.signature == "as")
    }

    @Test("signatures are validated: nesting, dict entry rules, unknown codes")
    func signatureValidation() throws {
        for good in ["", "y", "a{sv}", "a{oa{sa{sv}}}", "(i(s)v)", "aai", "a{qv}h"] {
            #expect(throws: Never.self) { try DBusSignature(good) }
        }
        for bad in ["a", "(", "()", "a{vs}", "{sv}", "a{s}", "a{sss}", "z", "(ii", "ii)", String(repeating: "a", count: 33) + "i",
                    String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33), String(repeating: "i", count: 256)] {
            #expect(throws: DBusSignatureError.self, "\(bad)") { try DBusSignature(bad) }
        }
        let text = "a{sv}i"
        #expect(try DBusSignature(text).types == [.dict(key: .string, value: .variant), .int32])
        for badPath in ["/bad//path", "", "noslash", "/trailing/", "/sp ace"] {
            #expect(throws: DBusDecodingError.self) { try ObjectPath(badPath) }
        }
    }

    @Test("unix fds pass both ways: the receiver writes to the fd it got, the sender reads")
    func unixFDsBothWays() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            // Server: receives a write end, writes "ping" into it, and returns a new pipe read end.
            let handle = try server.export([DBusInterface(name: "org.bluecap.FD", methods: [
                DBusMethod("Swap", input: "h", output: "h") { call, responder in
                    do {
                        let fd = try FileDescriptor.decode(call.body[0])
                        _ = "ping".withCString { write(fd.rawValue, $0, 4) }
                        var p: [Int32] = [-1, -1]
                        _ = pipe(&p)
                        _ = "pong".withCString { write(p[1], $0, 4) }
                        close(p[1])
                        responder.succeed([.unixFD(FileDescriptor(taking: p[0]))])
                    } catch {
                        responder.fail(name: DBusRemoteError.invalidArgs, message: "\(error)")
                    }
                },
            ])], at: "/fd")
            defer { handle.unexport() }
            var p: [Int32] = [-1, -1]
            #expect(pipe(&p) == 0)
            let reader = FileDescriptor(taking: p[0])
            let writer = FileDescriptor(taking: p[1])
            let reply = try await client.call(destination: server.uniqueName, path: "/fd", interface: "org.bluecap.FD",
                                              member: "Swap", arguments: [.unixFD(writer)])
            var buf = [UInt8](repeating: 0, count: 4)
            #expect(read(reader.rawValue, &buf, 4) == 4)
            #expect(String(decoding: buf, as: UTF8.self) == "ping")
            let got = try FileDescriptor.decode(reply.body[0])
            #expect(read(got.rawValue, &buf, 4) == 4)
            #expect(String(decoding: buf, as: UTF8.self) == "pong")
        }
    }
}
