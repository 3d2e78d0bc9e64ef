// Wire: a minimal D-Bus marshaller (either byte order) for tests of in-place readers.
import DBus

/// A value marshalled by ``Wire``.
public enum WireItem: Sendable {
    case y(UInt8), b(Bool), n(Int16), q(UInt16), i(Int32), u(UInt32), x(Int64), t(UInt64), d(Double)
    case s(String), o(String), ay([UInt8]), strings([String])

    /// Its type signature.
    public var signature: String {
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

    /// What a basic reader should give (nil for the containers).
    public var basic: DBusValue? {
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

/// A minimal D-Bus marshaller, in either byte order, for tests that need a body libdbus did not
/// write (the other byte order).
public struct Wire {
    /// Big-endian (`B`) rather than little-endian (`l`).
    public let bigEndian: Bool
    /// The bytes so far.
    public var bytes: [UInt8] = []

    /// An empty buffer in the given byte order.
    public init(bigEndian: Bool) { self.bigEndian = bigEndian }

    /// Zero padding to `alignment`.
    public mutating func pad(_ alignment: Int) { while bytes.count % alignment != 0 { bytes.append(0) } }
    /// An integer, aligned to its size.
    public mutating func int<T: FixedWidthInteger>(_ v: T) {
        pad(MemoryLayout<T>.size)
        let ordered = bigEndian ? v.bigEndian : v.littleEndian
        withUnsafeBytes(of: ordered) { bytes += $0 }
    }
    /// A string or object path.
    public mutating func string(_ s: String) {
        int(UInt32(s.utf8.count))
        bytes += s.utf8
        bytes.append(0)
    }
    /// A signature.
    public mutating func signature(_ s: String) {
        bytes.append(UInt8(s.utf8.count))
        bytes += s.utf8
        bytes.append(0)
    }
    /// An array: its length word, the padding to `alignment`, then `elements`.
    public mutating func array(alignment: Int, _ elements: (inout Wire) -> Void) {
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
    /// One value.
    public mutating func item(_ item: WireItem) {
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

    // MARK: Whole messages

    /// A whole signal message from `path` whose body is `body` with signature `signature`.
    public static func signal(bigEndian: Bool, path: String = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011",
                              interface: String = "org.freedesktop.DBus.Properties", member: String = "PropertiesChanged",
                              signature: String, body: Wire) -> [UInt8] {
        var message = Wire(bigEndian: bigEndian)
        message.bytes = [UInt8(ascii: bigEndian ? "B" : "l"), 4, 0, 1]
        message.int(UInt32(body.bytes.count))
        message.int(UInt32(7))
        let fields: [(UInt8, String, String)] = [(1, "o", path), (2, "s", interface), (3, "s", member)]
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
            w.signature(signature)
        }
        message.pad(8)
        return message.bytes + body.bytes
    }

    /// A whole `PropertiesChanged(sa{sv}as)` signal message.
    public static func propertiesChanged(bigEndian: Bool, interface: String, changed: [(String, WireItem)], invalidated: [String]) -> [UInt8] {
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
        return signal(bigEndian: bigEndian, signature: "sa{sv}as", body: body)
    }
}
