// BodyReader: a received message's body read in place, checked against the library's own
// marshalling and decoding, in both byte orders.
@_spi(Fuzzing) import DBus
import Foundation
import Testing
import TestSupport

@Suite("Message bodies read in place")
struct BodyReaderTests {
    static let path: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"

    /// The wire bytes of a signal the library builds with `arguments`.
    static func signal(_ arguments: [DBusValue]) throws -> [UInt8] {
        try DBusFuzzing.encodeSignal(path: path, interface: "org.example.Test", member: "Changed", arguments: arguments)
    }

    /// Runs `body` on the reader of `bytes`' body (nil: no reader); nil when libdbus rejects the bytes.
    static func read<R>(_ bytes: [UInt8], _ body: (inout BodyReader?) -> R) -> R? {
        bytes.withUnsafeBytes { raw in
            DBusFuzzing.withSignalView(messageBytes: raw) { view in
                var reader = view.body
                return body(&reader)
            }
        }
    }

    static func bytes(_ values: [UInt8]) -> DBusValue { .array(element: .byte, values.map { .byte($0) }) }

    // MARK: Round trips

    static let bodies: [[DBusValue]] = [
        [.string("org.bluez.GattCharacteristic1"), .dict(key: .string, value: .variant, [.init(.string("Value"), .variant(bytes([1, 2, 3])))]),
         .array(element: .string, [])],
        [.string("org.bluez.Device1"), .dict(key: .string, value: .variant, [
            .init(.string("RSSI"), .variant(.int16(-60))), .init(.string("Connected"), .variant(.bool(true))),
            .init(.string("UUIDs"), .variant(.array(element: .string, [.string("180f"), .string("180a")]))),
            .init(.string("ManufacturerData"), .variant(.dict(key: .uint16, value: .variant, [.init(.uint16(76), .variant(bytes([2, 21])))]))),
         ]), .array(element: .string, [.string("Name"), .string("Alias")])],
        [.objectPath(path), .dict(key: .string, value: .dict(key: .string, value: .variant), [
            .init(.string("org.bluez.Device1"), .dict(key: .string, value: .variant, [
                .init(.string("Address"), .variant(.string("C0:FF:EE:00:00:01"))), .init(.string("Adapter"), .variant(.objectPath("/org/bluez/hci0"))),
            ])),
         ])],
        [.objectPath(path), .array(element: .string, [.string("org.bluez.Device1")])],
        [.string("mixed"), .byte(7), .int64(-1 << 40), .double(-0.125), .uint16(9), .uint64(1 << 63), .int32(-5), .uint32(5),
         .signature("a{sv}"), .struct([.byte(1), .string("in a struct"), .double(2.5)]), bytes([]), .variant(.variant(.int16(3)))],
        [.string("empty containers"), .array(element: .int32, []), .dict(key: .string, value: .variant, []), bytes([])],
    ]

    @Test("walking the reader gives every value the decoded body holds, and nothing more")
    func roundTrips() throws {
        for arguments in Self.bodies {
            let wire = try Self.signal(arguments)
            let mismatch = wire.withUnsafeBytes { DBusFuzzing.bodyReaderMismatch(messageBytes: $0) }
            #expect(mismatch == nil, "\(arguments)")
            #expect(Self.read(wire) { $0 != nil } == true, "\(arguments)")
        }
    }

    @Test("a PropertiesChanged body read step by step: names in place, containers entered, the rest skipped")
    func stepByStep() throws {
        let wire = try Self.signal(Self.bodies[1])
        let read = Self.read(wire) { reader -> [String]? in
            guard var body = reader else { return nil }
            var out: [String] = []
            guard let interface = body.readString() else { return nil }
            out.append(String(decoding: interface, as: UTF8.self))
            let entries = body.readArray { changed -> Int? in
                var count = 0
                while !changed.isAtEnd {
                    let ok = changed.readStruct { entry -> Bool? in
                        guard let name = entry.readString() else { return nil }
                        out.append(String(decoding: name, as: UTF8.self))
                        // The value: read when basic, else passed over (the struct moves past it).
                        return entry.readVariant { value -> Bool? in
                            if let basic = value.readBasic() { out.append("\(basic)") }
                            return true
                        }
                    }
                    guard ok == true else { return nil }
                    count += 1
                }
                return count
            }
            #expect(entries == 4)
            let invalidated = body.readArray { names -> Int? in
                var n = 0
                while names.readString() != nil { n += 1 }
                return n
            }
            #expect(invalidated == 2)
            #expect(body.isAtEnd)
            return out
        }
        #expect(read == ["org.bluez.Device1", "RSSI", "\(DBusValue.int16(-60))", "Connected", "\(DBusValue.bool(true))",
                         "UUIDs", "ManufacturerData"])
    }

    @Test("a read of another type reads nothing and leaves the reader where it was")
    func wrongTypeReadsNothing() throws {
        let wire = try Self.signal([.string("x"), .int32(5), Self.bytes([1, 2]), .struct([.byte(1)])])
        let ok = Self.read(wire) { reader -> Bool in
            guard var body = reader, body.readString() != nil else { return false }
            guard body.readString() == nil, body.readBytes() == nil, body.readArray({ _ in true }) == nil,
                  body.readStruct({ _ in true }) == nil, body.readVariant({ _ in true }) == nil,
                  body.readBasic() == .int32(5) else { return false }
            guard body.readBasic() == nil, body.nextIsByteArray, let bytes = body.readBytes(), Array(bytes) == [1, 2] else { return false }
            guard body.skip(), body.isAtEnd, !body.skip() else { return false }
            return true
        }
        #expect(ok == true)
    }

    @Test("no reader when the first argument is not a string or object path")
    func firstArgumentNotText() throws {
        let wire = try Self.signal([.int32(5), .string("x")])
        #expect(Self.read(wire) { $0 == nil } == true)
        let empty = try Self.signal([])
        #expect(Self.read(empty) { $0 == nil } == true)
    }

    // MARK: Byte orders

    @Test("a body in either byte order reads the same; one whose order the first argument cannot tell is not read",
          arguments: [false, true])
    func byteOrders(bigEndian: Bool) throws {
        func message(_ first: String) -> [UInt8] {
            var body = Wire(bigEndian: bigEndian)
            body.string(first)
            body.int(Int16(-60))
            body.array(alignment: 1) { $0.bytes += [9, 8, 7] }
            body.int(UInt64(1) << 40)
            return Wire.signal(bigEndian: bigEndian, signature: "snayt", body: body)
        }
        let read = Self.read(message("org.bluez.Device1")) { reader -> [DBusValue]? in
            guard var body = reader, let first = body.readString(), String(decoding: first, as: UTF8.self) == "org.bluez.Device1",
                  let n = body.readBasic(), let bytes = body.readBytes(), let t = body.readBasic(), body.isAtEnd else { return nil }
            return [n, Self.bytes(Array(bytes)), t]
        }
        #expect(read == [.int16(-60), Self.bytes([9, 8, 7]), .uint64(1 << 40)])
        let mismatch = message("org.bluez.Device1").withUnsafeBytes { DBusFuzzing.bodyReaderMismatch(messageBytes: $0) }
        #expect(mismatch == nil)
        // An empty first string: its length word reads 0 in both orders.
        #expect(Self.read(message("")) { $0 == nil } == true)
    }
}
