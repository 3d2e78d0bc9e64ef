// The one change of a PropertiesChanged body, read straight from the message's bytes.
import Foundation

/// A `PropertiesChanged` body (`sa{sv}as`) that changes exactly one property, holding a basic
/// value or a byte array, and invalidates nothing — read from the marshalled bytes instead of
/// through libdbus's iterator (which re-checks the signature at every step).
///
/// Only for a message libdbus has validated (every received or demarshalled message is: the
/// loader checks each length, string, padding and variant signature against the message's
/// signature), and only after checking that signature is `sa{sv}as`: the walk below then stays
/// inside the body by construction. It starts from the first argument's string, which
/// `dbus_message_iter_get_basic` hands out as a pointer into the body right after its length
/// word — so the body starts 4 bytes before it. The body must be in this machine's byte order
/// (`dbus_message_iter_init` converts a message sent in the other order before reading it): the
/// length word must read as the string's length, and read differently when byte-swapped (an
/// empty or palindromic length could not tell the order). Otherwise the body is not read (nil:
/// the caller's generic path decodes the message).
struct LoneChange {
    // MARK: Fields

    private let body: UnsafeRawPointer
    /// The interface name's bytes (without the terminating NUL).
    let interface: UnsafeRawBufferPointer
    /// The changed property's name.
    let name: UnsafeRawBufferPointer
    /// The variant's type code (a basic type) or `LibDBus.typeArray` for a byte array.
    let typeCode: UInt8
    /// Where the value starts (aligned for its type; for a byte array, at its length word).
    private let valueOffset: Int

    // MARK: Reading

    /// Reads the body whose first string is at `firstString`; nil when it is not a lone change
    /// of a basic value or byte array with nothing invalidated, or not in this machine's byte
    /// order.
    init?(firstString: UnsafePointer<CChar>) {
        let text = UnsafeRawPointer(firstString)
        let body = text - 4
        let length = strlen(firstString)
        let word = body.loadUnaligned(as: UInt32.self)
        guard Int(word) == length, word != word.byteSwapped else { return nil }
        self.body = body
        interface = UnsafeRawBufferPointer(start: text, count: length)

        // a{sv}: its byte length, then entries aligned to 8.
        var offset = Self.aligned(4 + length + 1, 4)
        let changedLength = Int(Self.uint32(body, offset))
        guard changedLength > 0 else { return nil }
        offset = Self.aligned(offset + 4, 8)
        let changedEnd = offset + changedLength

        // The first entry: the name (s), the variant's signature (g), the value.
        let nameLength = Int(Self.uint32(body, offset))
        name = UnsafeRawBufferPointer(start: body + offset + 4, count: nameLength)
        offset += 4 + nameLength + 1
        let signatureLength = Int(body.load(fromByteOffset: offset, as: UInt8.self))
        let signature = UnsafeRawBufferPointer(start: body + offset + 1, count: signatureLength)
        offset += 1 + signatureLength + 1
        let valueEnd: Int
        if signatureLength == 2, signature[0] == LibDBus.typeArray, signature[1] == LibDBus.typeByte {
            typeCode = LibDBus.typeArray
            valueOffset = Self.aligned(offset, 4)
            valueEnd = valueOffset + 4 + Int(Self.uint32(body, valueOffset))
        } else if signatureLength == 1, let size = Self.basicSize(signature[0]) {
            typeCode = signature[0]
            valueOffset = Self.aligned(offset, size.alignment)
            valueEnd = size.fixed.map { valueOffset + $0 } ?? valueOffset + 4 + Int(Self.uint32(body, valueOffset)) + 1
        } else {
            return nil
        }
        // Exactly one entry; then `as`, aligned to 4, must be empty.
        guard valueEnd == changedEnd, Self.uint32(body, Self.aligned(changedEnd, 4)) == 0 else { return nil }
    }

    // MARK: Values

    /// The byte array's bytes (nil when the value is not a byte array).
    var bytes: Data? {
        guard typeCode == LibDBus.typeArray else { return nil }
        let count = Int(Self.uint32(body, valueOffset))
        return count == 0 ? Data() : Data(bytes: body + valueOffset + 4, count: count)
    }

    /// The basic value (nil when the value is a byte array).
    var basicValue: DBusValue? {
        switch typeCode {
        case LibDBus.typeByte: return .byte(body.load(fromByteOffset: valueOffset, as: UInt8.self))
        case LibDBus.typeBoolean: return .bool(Self.uint32(body, valueOffset) != 0)
        case LibDBus.typeInt16: return .int16(Int16(bitPattern: fixed(UInt16.self)))
        case LibDBus.typeUInt16: return .uint16(fixed(UInt16.self))
        case LibDBus.typeInt32: return .int32(Int32(bitPattern: fixed(UInt32.self)))
        case LibDBus.typeUInt32: return .uint32(fixed(UInt32.self))
        case LibDBus.typeInt64: return .int64(Int64(bitPattern: fixed(UInt64.self)))
        case LibDBus.typeUInt64: return .uint64(fixed(UInt64.self))
        case LibDBus.typeDouble: return .double(Double(bitPattern: fixed(UInt64.self)))
        case LibDBus.typeString: return .string(text(at: valueOffset))
        case LibDBus.typeObjectPath: return .objectPath(ObjectPath(unchecked: text(at: valueOffset)))
        default: return nil
        }
    }

    /// Whether `bytes` (a name read above) spells `text`.
    static func equals(_ bytes: UnsafeRawBufferPointer, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.count == bytes.count && (utf8.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, utf8.count) == 0)
        }
    }

    static func string(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Marshalling rules

    private func fixed<T: FixedWidthInteger>(_: T.Type) -> T { body.loadUnaligned(fromByteOffset: valueOffset, as: T.self) }

    private func text(at offset: Int) -> String {
        Self.string(UnsafeRawBufferPointer(start: body + offset + 4, count: Int(Self.uint32(body, offset))))
    }

    private static func uint32(_ body: UnsafeRawPointer, _ offset: Int) -> UInt32 {
        body.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    }

    private static func aligned(_ offset: Int, _ alignment: Int) -> Int { (offset + alignment - 1) & ~(alignment - 1) }

    /// Alignment and size of a basic type (size nil: a string or object path, length-prefixed).
    private static func basicSize(_ code: UInt8) -> (alignment: Int, fixed: Int?)? {
        switch code {
        case LibDBus.typeByte: (1, 1)
        case LibDBus.typeInt16, LibDBus.typeUInt16: (2, 2)
        case LibDBus.typeBoolean, LibDBus.typeInt32, LibDBus.typeUInt32: (4, 4)
        case LibDBus.typeInt64, LibDBus.typeUInt64, LibDBus.typeDouble: (8, 8)
        case LibDBus.typeString, LibDBus.typeObjectPath: (4, nil)
        default: nil
        }
    }
}
