// BodyReader: the marshalled body of a received message, read in place.
import Foundation

/// A cursor over the marshalled body of a received message, for a caller that wants a few
/// values of a frequent message without decoding it into a ``Message`` (header fields as
/// Strings, the body as ``DBusValue`` trees). It knows the D-Bus marshalling rules and nothing
/// of any interface: what a body means is the caller's business.
///
/// Obtained from ``SignalView/body`` and, like the view, only valid during the `peek` call
/// (the pointers it hands out point into libdbus's copy of the message).
///
/// Safety: libdbus has validated every received (or demarshalled) message against its
/// signature (each length, string, padding and variant signature), and the reader only moves
/// as a type of that signature — or of a variant's signature, itself validated — says, so it
/// stays inside the body by construction. On top of that, every read checks its type code and
/// that it ends before the enclosing array does. The body must be in this machine's byte order
/// (``SignalView/body`` checks that).
///
/// Inlinable, so that a caller's closures and reads are specialized and inlined in its module
/// (the reader sits on the path of every notification read in place).
///
/// Each level (the body, an array's elements, a struct's or dict entry's fields, a variant's
/// value) is read in order: ``nextType`` tells the type code of the next value, the `read…`
/// methods read it and move on, ``skip()`` passes over it.
public struct BodyReader {
    // MARK: Fields

    /// The body's first byte: offsets are counted from it (the body starts 8-aligned, so
    /// alignment is too).
    @usableFromInline let body: UnsafeRawPointer
    /// The types of this level: the message's signature, an array's element type, a struct's
    /// fields, or a variant's type.
    @usableFromInline let types: UnsafeRawBufferPointer
    /// The next type in `types`.
    @usableFromInline var typeIndex = 0
    /// Where the next value starts (before its alignment padding).
    @usableFromInline var offset: Int
    /// Where the enclosing array ends (`Int.max` outside any array: the signature bounds the body).
    @usableFromInline let limit: Int
    /// Whether this level is an array's elements: `types` repeats until `limit`.
    @usableFromInline let repeats: Bool

    @usableFromInline
    init(body: UnsafeRawPointer, types: UnsafeRawBufferPointer, offset: Int = 0, limit: Int = .max, repeats: Bool = false) {
        self.body = body
        self.types = types
        self.offset = offset
        self.limit = limit
        self.repeats = repeats
    }

    // MARK: Where it is

    /// The type code of the next value at this level (`UInt8(ascii: "s")`, `"a"`, `"("`, …), nil
    /// when this level has no more values.
    @inlinable public var nextType: UInt8? {
        if repeats { return offset < limit && !types.isEmpty ? types[index] : nil }
        return typeIndex < types.count ? types[typeIndex] : nil
    }

    /// The index of the next type in `types`: an array's element type starts over after each element.
    @inlinable var index: Int { repeats && typeIndex == types.count ? 0 : typeIndex }

    /// Moves `typeIndex` to the next element's type once an array's element has been read.
    @inlinable mutating func startElement() {
        if repeats && typeIndex == types.count { typeIndex = 0 }
    }

    /// Whether this level has no more values.
    @inlinable public var isAtEnd: Bool { nextType == nil }

    /// Whether the next value is an array of bytes (`ay`).
    @inlinable public var nextIsByteArray: Bool {
        nextType == Code.array && index + 1 < types.count && types[index + 1] == Code.byte
    }

    // MARK: Reading

    /// The next value when it is a string, object path or signature: its bytes in place, without
    /// the terminating NUL. Nil (nothing read) for another type.
    @inlinable public mutating func readString() -> UnsafeRawBufferPointer? {
        startElement()
        guard let code = nextType, let (start, count, end) = stringBounds(code) else { return nil }
        offset = end
        typeIndex += 1
        return UnsafeRawBufferPointer(start: body + start, count: count)
    }

    /// The next value when it is a basic type other than a file descriptor (a byte, boolean,
    /// integer, double, string, object path or signature). Nil (nothing read) for another type.
    @inlinable public mutating func readBasic() -> DBusValue? {
        startElement()
        guard let code = nextType else { return nil }
        if let (start, count, end) = stringBounds(code) {
            let text = String(decoding: UnsafeRawBufferPointer(start: body + start, count: count), as: UTF8.self)
            let value: DBusValue
            switch code {
            case Code.string: value = .string(text)
            case Code.objectPath: value = .objectPath(ObjectPath(unchecked: text))
            default:
                guard let signature = try? DBusSignature(text) else { return nil }
                value = .signature(signature)
            }
            offset = end
            typeIndex += 1
            return value
        }
        guard let size = Self.fixedSize(code), code != Code.unixFD else { return nil }
        let start = Self.aligned(offset, size)
        guard start + size <= limit else { return nil }
        let value: DBusValue
        switch code {
        case Code.byte: value = .byte(body.load(fromByteOffset: start, as: UInt8.self))
        case Code.boolean: value = .bool(load(UInt32.self, at: start) != 0)
        case Code.int16: value = .int16(Int16(bitPattern: load(UInt16.self, at: start)))
        case Code.uint16: value = .uint16(load(UInt16.self, at: start))
        case Code.int32: value = .int32(Int32(bitPattern: load(UInt32.self, at: start)))
        case Code.uint32: value = .uint32(load(UInt32.self, at: start))
        case Code.int64: value = .int64(Int64(bitPattern: load(UInt64.self, at: start)))
        case Code.uint64: value = .uint64(load(UInt64.self, at: start))
        default: value = .double(Double(bitPattern: load(UInt64.self, at: start)))
        }
        offset = start + size
        typeIndex += 1
        return value
    }

    /// The next value when it is an array of bytes (`ay`): the bytes in place. Nil (nothing
    /// read) for another type.
    @inlinable public mutating func readBytes() -> UnsafeRawBufferPointer? {
        startElement()
        guard nextIsByteArray, let (start, end) = arrayBounds(elementAlignment: 1) else { return nil }
        offset = end
        typeIndex += 2
        return UnsafeRawBufferPointer(start: body + start, count: end - start)
    }

    /// Reads the next value when it is an array (a dictionary too: an array of dict entries):
    /// `elements` gets a reader of its elements, and this reader moves past the array whatever
    /// `elements` read. Returns what `elements` returns; nil (nothing read) for another type.
    @inlinable public mutating func readArray<R>(_ elements: (inout BodyReader) -> R?) -> R? {
        startElement()
        guard nextType == Code.array, let elementLength = Self.completeTypeLength(types, typeIndex + 1),
              let alignment = Self.alignment(types[typeIndex + 1]),
              let (start, end) = arrayBounds(elementAlignment: alignment) else { return nil }
        let elementTypes = UnsafeRawBufferPointer(rebasing: types[(typeIndex + 1)..<(typeIndex + 1 + elementLength)])
        var reader = BodyReader(body: body, types: elementTypes, offset: start, limit: end, repeats: true)
        offset = end
        typeIndex += 1 + elementLength
        return elements(&reader)
    }

    /// Reads the next value when it is a struct or a dict entry: `fields` gets a reader of its
    /// fields, and this reader moves past the fields `fields` left unread. Returns what `fields`
    /// returns; nil for another type, or when `fields` returns nil (this reader then stops where
    /// it is).
    @inlinable public mutating func readStruct<R>(_ fields: (inout BodyReader) -> R?) -> R? {
        startElement()
        guard let code = nextType, code == Code.structBegin || code == Code.dictEntryBegin,
              let length = Self.completeTypeLength(types, typeIndex) else { return nil }
        let fieldTypes = UnsafeRawBufferPointer(rebasing: types[(typeIndex + 1)..<(typeIndex + length - 1)])
        var reader = BodyReader(body: body, types: fieldTypes, offset: Self.aligned(offset, 8), limit: limit)
        guard let result = fields(&reader), reader.skipRest() else { return nil }
        offset = reader.offset
        typeIndex += length
        return result
    }

    /// Reads the next value when it is a variant: `value` gets a reader of the one value it
    /// holds (its ``nextType`` is the variant's type), and this reader moves past it. Returns
    /// what `value` returns; nil for another type, or when `value` returns nil.
    @inlinable public mutating func readVariant<R>(_ value: (inout BodyReader) -> R?) -> R? {
        startElement()
        guard nextType == Code.variant, offset < limit else { return nil }
        let length = Int(body.load(fromByteOffset: offset, as: UInt8.self))
        let signature = UnsafeRawBufferPointer(start: body + offset + 1, count: length)
        guard offset + 1 + length < limit, Self.completeTypeLength(signature, 0) == length else { return nil }
        var reader = BodyReader(body: body, types: signature, offset: offset + 1 + length + 1, limit: limit)
        guard let result = value(&reader), reader.skipRest() else { return nil }
        offset = reader.offset
        typeIndex += 1
        return result
    }

    /// Passes over the next value, whatever its type; false at the end of this level.
    @inlinable @discardableResult
    public mutating func skip() -> Bool {
        startElement()
        guard let code = nextType else { return false }
        switch code {
        case Code.array:
            return readArray { _ in () } != nil
        case Code.structBegin, Code.dictEntryBegin:
            return readStruct { _ in () } != nil
        case Code.variant:
            return readVariant { _ in () } != nil
        case Code.string, Code.objectPath, Code.signature:
            return readString() != nil
        default:
            guard let size = Self.fixedSize(code) else { return false }
            let start = Self.aligned(offset, size)
            guard start + size <= limit else { return false }
            offset = start + size
            typeIndex += 1
            return true
        }
    }

    /// Passes over every value left at this level (a struct's or variant's); false when one
    /// cannot be read.
    @inlinable mutating func skipRest() -> Bool {
        while !isAtEnd { guard skip() else { return false } }
        return true
    }

    // MARK: Marshalling rules

    /// A string's, object path's or signature's bytes (start, count) and where it ends; nil for
    /// another type or when it would run past the enclosing array or lacks its NUL.
    @inlinable func stringBounds(_ code: UInt8) -> (Int, Int, Int)? {
        let start: Int, count: Int
        switch code {
        case Code.string, Code.objectPath:
            let at = Self.aligned(offset, 4)
            guard at + 4 <= limit else { return nil }
            (start, count) = (at + 4, Int(load(UInt32.self, at: at)))
        case Code.signature:
            guard offset < limit else { return nil }
            (start, count) = (offset + 1, Int(body.load(fromByteOffset: offset, as: UInt8.self)))
        default:
            return nil
        }
        guard start + count < limit, body.load(fromByteOffset: start + count, as: UInt8.self) == 0 else { return nil }
        return (start, count, start + count + 1)
    }

    /// An array's elements (from after the padding that follows its length word to its end);
    /// nil when it would run past the enclosing array.
    @inlinable func arrayBounds(elementAlignment: Int) -> (Int, Int)? {
        let at = Self.aligned(offset, 4)
        guard at + 4 <= limit else { return nil }
        let start = Self.aligned(at + 4, elementAlignment)
        let (end, overflow) = start.addingReportingOverflow(Int(load(UInt32.self, at: at)))
        guard !overflow, end <= limit else { return nil }
        return (start, end)
    }

    @inlinable func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T { body.loadUnaligned(fromByteOffset: offset, as: T.self) }

    @inlinable static func aligned(_ offset: Int, _ alignment: Int) -> Int { (offset + alignment - 1) & ~(alignment - 1) }

    /// The size (and alignment) of a fixed-size basic type; nil for any other code.
    @inlinable static func fixedSize(_ code: UInt8) -> Int? {
        switch code {
        case Code.byte: 1
        case Code.int16, Code.uint16: 2
        case Code.boolean, Code.int32, Code.uint32, Code.unixFD: 4
        case Code.int64, Code.uint64, Code.double: 8
        default: nil
        }
    }

    /// The alignment of a value of type `code`; nil for a code that starts no type.
    @inlinable static func alignment(_ code: UInt8) -> Int? {
        switch code {
        case Code.string, Code.objectPath, Code.array: 4
        case Code.signature, Code.variant: 1
        case Code.structBegin, Code.dictEntryBegin: 8
        default: fixedSize(code)
        }
    }

    /// The length of the single complete type starting at `index` of `signature`; nil when none
    /// starts there.
    @inlinable static func completeTypeLength(_ signature: UnsafeRawBufferPointer, _ index: Int) -> Int? {
        guard index < signature.count else { return nil }
        switch signature[index] {
        case Code.array:
            return completeTypeLength(signature, index + 1).map { $0 + 1 }
        case Code.structBegin, Code.dictEntryBegin:
            var i = index + 1
            while i < signature.count, signature[i] != Code.structEnd, signature[i] != Code.dictEntryEnd {
                guard let length = completeTypeLength(signature, i) else { return nil }
                i += length
            }
            return i < signature.count ? i + 1 - index : nil
        default:
            return alignment(signature[index]) != nil ? 1 : nil
        }
    }

    /// The type codes (libdbus's `DBUS_TYPE_…` and `DBUS_…_BEGIN_CHAR` / `_END_CHAR`), as the
    /// D-Bus specification fixes them.
    @usableFromInline enum Code {
        @inlinable static var byte: UInt8 { UInt8(ascii: "y") }
        @inlinable static var boolean: UInt8 { UInt8(ascii: "b") }
        @inlinable static var int16: UInt8 { UInt8(ascii: "n") }
        @inlinable static var uint16: UInt8 { UInt8(ascii: "q") }
        @inlinable static var int32: UInt8 { UInt8(ascii: "i") }
        @inlinable static var uint32: UInt8 { UInt8(ascii: "u") }
        @inlinable static var int64: UInt8 { UInt8(ascii: "x") }
        @inlinable static var uint64: UInt8 { UInt8(ascii: "t") }
        @inlinable static var double: UInt8 { UInt8(ascii: "d") }
        @inlinable static var string: UInt8 { UInt8(ascii: "s") }
        @inlinable static var objectPath: UInt8 { UInt8(ascii: "o") }
        @inlinable static var signature: UInt8 { UInt8(ascii: "g") }
        @inlinable static var unixFD: UInt8 { UInt8(ascii: "h") }
        @inlinable static var array: UInt8 { UInt8(ascii: "a") }
        @inlinable static var variant: UInt8 { UInt8(ascii: "v") }
        @inlinable static var structBegin: UInt8 { UInt8(ascii: "(") }
        @inlinable static var structEnd: UInt8 { UInt8(ascii: ")") }
        @inlinable static var dictEntryBegin: UInt8 { UInt8(ascii: "{") }
        @inlinable static var dictEntryEnd: UInt8 { UInt8(ascii: "}") }
    }
}
