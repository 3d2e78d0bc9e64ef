// SignalView's in-place readers on hand-marshalled PropertiesChanged signals, in both byte orders.
@_spi(Fuzzing) import DBus
import Foundation
import Testing

@Suite("Signals read in place, from wire bytes")
struct SignalViewWireTests {
    // MARK: A minimal D-Bus marshaller (either byte order)

    /// A value of a changed property, marshalled by ``Wire``.
    enum Item {
        case y(UInt8), b(Bool), n(Int16), q(UInt16), i(Int32), u(UInt32), x(Int64), t(UInt64), d(Double)
        case s(String), o(String), ay([UInt8]), strings([String])

        var signature: String {
            switch self {
            case .y: "y"
            case .b: "b"
            case .n: "n"
            case .q: "q"
            case .i: "i"
            case .u: "u"
            case .x: "x"
            case .t: "t"
            case .d: "d"
            case .s: "s"
            case .o: "o"
            case .ay: "ay"
            case .strings: "as"
            }
        }

        /// What the basic reader should give (nil for the containers).
        var basic: DBusValue? {
            switch self {
            case .y(let v): .byte(v)
            case .b(let v): .bool(v)
            case .n(let v): .int16(v)
            case .q(let v): .uint16(v)
            case .i(let v): .int32(v)
            case .u(let v): .uint32(v)
            case .x(let v): .int64(v)
            case .t(let v): .uint64(v)
            case .d(let v): .double(v)
            case .s(let v): .string(v)
            case .o(let v): (try? ObjectPath(v)).map { .objectPath($0) }
            case .ay, .strings: nil
            }
        }
    }

    struct Wire {
        let bigEndian: Bool
        var bytes: [UInt8] = []

        mutating func pad(_ alignment: Int) { while bytes.count % alignment != 0 { bytes.append(0) } }
        mutating func int<T: FixedWidthInteger>(_ v: T) {
            pad(MemoryLayout<T>.size)
            let ordered = bigEndian ? v.bigEndian : v.littleEndian
            withUnsafeBytes(of: ordered) { bytes += $0 }
        }
        mutating func string(_ s: String) {
            int(UInt32(s.utf8.count))
            bytes += s.utf8
            bytes.append(0)
        }
        mutating func signature(_ s: String) {
            bytes.append(UInt8(s.utf8.count))
            bytes += s.utf8
            bytes.append(0)
        }
        /// An array: its length word, the padding to `alignment`, then `elements`.
        mutating func array(alignment: Int, _ elements: (inout Wire) -> Void) {
            int(UInt32(0))
            let lengthAt = bytes.count - 4
            pad(alignment)
            let start = bytes.count
            elements(&self)
            let length = UInt32(bytes.count - start)
            withUnsafeBytes(of: bigEndian ? length.bigEndian : length.littleEndian) {
                bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0)
            }
        }
        mutating func item(_ item: Item) {
            switch item {
            case .y(let v): bytes.append(v)
            case .b(let v): int(UInt32(v ? 1 : 0))
            case .n(let v): int(v)
            case .q(let v): int(v)
            case .i(let v): int(v)
            case .u(let v): int(v)
            case .x(let v): int(v)
            case .t(let v): int(v)
            case .d(let v): int(v.bitPattern)
            case .s(let v), .o(let v): string(v)
            case .ay(let v): array(alignment: 1) { $0.bytes += v }
            case .strings(let v): array(alignment: 4) { w in for s in v { w.string(s) } }
            }
        }
    }

    /// A whole `PropertiesChanged(sa{sv}as)` signal message.
    static func propertiesChanged(bigEndian: Bool, interface: String, changed: [(String, Item)], invalidated: [String]) -> [UInt8] {
        var body = Wire(bigEndian: bigEndian)
        body.string(interface)
        body.array(alignment: 8) { w in
            for (name, value) in changed {
                w.pad(8)
                w.string(name)
                w.signature(value.signature)
                w.item(value)
            }
        }
        body.array(alignment: 4) { w in for name in invalidated { w.string(name) } }

        var message = Wire(bigEndian: bigEndian)
        message.bytes = [UInt8(ascii: bigEndian ? "B" : "l"), 4, 0, 1]
        message.int(UInt32(body.bytes.count))
        message.int(UInt32(7))
        let fields: [(UInt8, String, String)] = [
            (1, "o", "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"),
            (2, "s", "org.freedesktop.DBus.Properties"),
            (3, "s", "PropertiesChanged"),
        ]
        message.array(alignment: 8) { w in
            for (code, type, value) in fields {
                w.pad(8)
                w.bytes.append(code)
                w.signature(type)
                w.string(value)
            }
            w.pad(8)
            w.bytes.append(8)
            w.signature("g")
            w.signature("sa{sv}as")
        }
        message.pad(8)
        return message.bytes + body.bytes
    }

    // MARK: Cases

    static let characteristic = "org.bluez.GattCharacteristic1"
    static let device = "org.bluez.Device1"

    /// (interface, changes, invalidated, expected bytes for (characteristic, "Value"), expected basic value).
    static let cases: [(String, [(String, Item)], [String], Data?, DBusValue?)] = [
        (characteristic, [("Value", .ay([1, 2, 3]))], [], Data([1, 2, 3]), nil),
        (characteristic, [("Value", .ay([]))], [], Data(), nil),
        (characteristic, [("Value", .ay((0..<300).map { UInt8($0 % 251) }))], [], Data((0..<300).map { UInt8($0 % 251) }), nil),
        (device, [("RSSI", .n(-60))], [], nil, .int16(-60)),
        (device, [("Connected", .b(true))], [], nil, .bool(true)),
        (device, [("Alias", .s("sensor ✓"))], [], nil, .string("sensor ✓")),
        (device, [("Adapter", .o("/org/bluez/hci0"))], [], nil, .objectPath("/org/bluez/hci0")),
        (device, [("TxPower", .y(7))], [], nil, .byte(7)),
        (device, [("Appearance", .q(0x0341))], [], nil, .uint16(0x0341)),
        (device, [("Class", .u(0x1F00))], [], nil, .uint32(0x1F00)),
        (device, [("Offset", .i(-123_456))], [], nil, .int32(-123_456)),
        (device, [("Big", .x(-1 << 40))], [], nil, .int64(-1 << 40)),
        (device, [("Bigger", .t(1 << 63))], [], nil, .uint64(1 << 63)),
        (device, [("Ratio", .d(-0.125))], [], nil, .double(-0.125)),
        (characteristic, [("Value", .ay([4])), ("Notifying", .b(true))], [], nil, nil),
        (characteristic, [("Value", .ay([5]))], ["Flags"], nil, nil),
        (characteristic, [], [], nil, nil),
        (characteristic, [], ["Value"], nil, nil),
        (characteristic, [("Value", .strings(["a", "b"]))], [], nil, nil),
        (device, [("RSSI", .n(-61))], ["TxPower"], nil, nil),
        ("org.bluez.GattDescriptor1", [("Value", .ay([6]))], [], nil, nil),
        // An empty interface name: the byte order cannot be told from its length word.
        ("", [("Value", .ay([6]))], [], nil, nil),
    ]

    @Test("each reader gives what the decoded body says, in both byte orders", arguments: [false, true])
    func readersMatchDecoding(bigEndian: Bool) throws {
        for (interface, changed, invalidated, bytes, basic) in Self.cases {
            let wire = Self.propertiesChanged(bigEndian: bigEndian, interface: interface, changed: changed, invalidated: invalidated)
            let label = "\(interface) \(changed.map(\.0)) \(invalidated)"
            let read = wire.withUnsafeBytes { raw in
                DBusFuzzing.withSignalView(messageBytes: raw) { view in
                    (view.onlyChangedBytes(interface: Self.characteristic, property: "Value"), view.onlyChangedBasicProperty())
                }
            }
            let (gotBytes, gotBasic) = try #require(read, "libdbus rejected the message for \(label)")
            #expect(gotBytes == bytes, "\(label)")
            #expect(gotBasic?.value == basic, "\(label)")
            if let gotBasic {
                #expect(gotBasic.interface == interface && gotBasic.name == changed[0].0, "\(label)")
            }
            let mismatch = wire.withUnsafeBytes { DBusFuzzing.inPlaceReaderMismatch(messageBytes: $0) }
            #expect(mismatch == nil, "\(label)")
        }
    }

    @Test("a message libdbus rejects is not read")
    func rejectedBytes() {
        var wire = Self.propertiesChanged(bigEndian: false, interface: Self.characteristic, changed: [("Value", .ay([1]))], invalidated: [])
        wire[wire.count - 4] = 0xFF  // the `as` length word now runs past the body
        #expect(wire.withUnsafeBytes { DBusFuzzing.withSignalView(messageBytes: $0) { _ in true } } == nil)
    }
}
