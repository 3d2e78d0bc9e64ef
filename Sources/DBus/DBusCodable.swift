// Typed conversions between Swift values and `DBusValue`.
import Foundation

/// A Swift type that can be read from a `DBusValue`; throws on a type mismatch.
public protocol DBusDecodable {
    /// Reads `value`; a variant is unwrapped first. Throws `DBusDecodingError` on mismatch.
    init(dbusValue value: DBusValue) throws(DBusDecodingError)
}

/// A Swift type with a fixed D-Bus type that converts to a `DBusValue`.
public protocol DBusEncodable {
    /// The D-Bus type every value of this Swift type has.
    static var dbusType: DBusType { get }
    /// The value as a `DBusValue`.
    var dbusValue: DBusValue { get }
}

/// Both directions.
public typealias DBusRepresentable = DBusDecodable & DBusEncodable

extension DBusValue {
    /// Reads the value as `T` (unwrapping variants); throws `DBusDecodingError` on mismatch.
    public func `as`<T: DBusDecodable>(_ type: T.Type = T.self) throws(DBusDecodingError) -> T {
        try T(dbusValue: self)
    }

    /// The value with any variant layers removed.
    public var unwrapped: DBusValue {
        var v = self
        while case .variant(let inner) = v { v = inner }
        return v
    }
}

extension Array where Element == DBusValue {
    /// Reads argument `index` as `T`; throws when it is missing or of another type.
    public func decode<T: DBusDecodable>(_ type: T.Type = T.self, at index: Int) throws(DBusDecodingError) -> T {
        guard indices.contains(index) else {
            throw DBusDecodingError("argument \(index) missing: the message has \(count) argument(s)")
        }
        do { return try T(dbusValue: self[index]) } catch {
            throw DBusDecodingError("argument \(index): \(error.message)")
        }
    }
}

@inline(__always)
private func mismatch(_ value: DBusValue, _ expected: String) -> DBusDecodingError {
    DBusDecodingError("expected \(expected), found \(value.signature) (\(value))")
}

// MARK: - Scalars

extension UInt8: DBusRepresentable {
    public static var dbusType: DBusType { .byte }
    public var dbusValue: DBusValue { .byte(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .byte(let v) = value.unwrapped else { throw mismatch(value, "y") }
        self = v
    }
}
extension Bool: DBusRepresentable {
    public static var dbusType: DBusType { .bool }
    public var dbusValue: DBusValue { .bool(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .bool(let v) = value.unwrapped else { throw mismatch(value, "b") }
        self = v
    }
}
extension Int16: DBusRepresentable {
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: DBusValue { .int16(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .int16(let v) = value.unwrapped else { throw mismatch(value, "n") }
        self = v
    }
}
extension UInt16: DBusRepresentable {
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: DBusValue { .uint16(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .uint16(let v) = value.unwrapped else { throw mismatch(value, "q") }
        self = v
    }
}
extension Int32: DBusRepresentable {
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: DBusValue { .int32(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .int32(let v) = value.unwrapped else { throw mismatch(value, "i") }
        self = v
    }
}
extension UInt32: DBusRepresentable {
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: DBusValue { .uint32(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .uint32(let v) = value.unwrapped else { throw mismatch(value, "u") }
        self = v
    }
}
extension Int64: DBusRepresentable {
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: DBusValue { .int64(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .int64(let v) = value.unwrapped else { throw mismatch(value, "x") }
        self = v
    }
}
extension UInt64: DBusRepresentable {
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: DBusValue { .uint64(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .uint64(let v) = value.unwrapped else { throw mismatch(value, "t") }
        self = v
    }
}
extension Double: DBusRepresentable {
    public static var dbusType: DBusType { .double }
    public var dbusValue: DBusValue { .double(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .double(let v) = value.unwrapped else { throw mismatch(value, "d") }
        self = v
    }
}
extension String: DBusRepresentable {
    public static var dbusType: DBusType { .string }
    public var dbusValue: DBusValue { .string(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .string(let v) = value.unwrapped else { throw mismatch(value, "s") }
        self = v
    }
}
extension ObjectPath: DBusRepresentable {
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .objectPath(let v) = value.unwrapped else { throw mismatch(value, "o") }
        self = v
    }
}
extension DBusSignature: DBusRepresentable {
    public static var dbusType: DBusType { .signature }
    public var dbusValue: DBusValue { .signature(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .signature(let v) = value.unwrapped else { throw mismatch(value, "g") }
        self = v
    }
}
extension FileDescriptor: DBusEncodable {
    public static var dbusType: DBusType { .unixFD }
    public var dbusValue: DBusValue { .unixFD(self) }
    /// Reads a `h` value (the same owning object, not a duplicate).
    public static func decode(_ value: DBusValue) throws(DBusDecodingError) -> FileDescriptor {
        guard case .unixFD(let v) = value.unwrapped else { throw mismatch(value, "h") }
        return v
    }
}

/// `DBusValue` itself encodes as a variant (`v`), so `[String: DBusValue]` is `a{sv}`.
extension DBusValue: DBusRepresentable {
    public static var dbusType: DBusType { .variant }
    public var dbusValue: DBusValue { .variant(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        if case .variant(let inner) = value { self = inner } else { self = value }
    }
}

// MARK: - Containers

extension Array: DBusDecodable where Element: DBusDecodable {
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .array(_, let items) = value.unwrapped else { throw mismatch(value, "an array") }
        var out: [Element] = []
        out.reserveCapacity(items.count)
        for item in items { out.append(try Element(dbusValue: item)) }
        self = out
    }
}
extension Array: DBusEncodable where Element: DBusEncodable {
    public static var dbusType: DBusType { .array(Element.dbusType) }
    public var dbusValue: DBusValue { .array(element: Element.dbusType, map(\.dbusValue)) }
}

extension Dictionary: DBusDecodable where Key: DBusDecodable, Value: DBusDecodable {
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .dict(_, _, let entries) = value.unwrapped else { throw mismatch(value, "a dict") }
        var out: [Key: Value] = [:]
        out.reserveCapacity(entries.count)
        for e in entries { out[try Key(dbusValue: e.key)] = try Value(dbusValue: e.value) }
        self = out
    }
}
extension Dictionary: DBusEncodable where Key: DBusEncodable, Value: DBusEncodable {
    public static var dbusType: DBusType { .dict(key: Key.dbusType, value: Value.dbusType) }
    public var dbusValue: DBusValue {
        .dict(key: Key.dbusType, value: Value.dbusType, map { .init($0.key.dbusValue, $0.value.dbusValue) })
    }
}

extension Data: DBusRepresentable {
    public static var dbusType: DBusType { .array(.byte) }
    public var dbusValue: DBusValue { .array(element: .byte, map { .byte($0) }) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        self = Data(try [UInt8](dbusValue: value))
    }
}

extension Optional where Wrapped == DBusValue {
    /// Reads an optional value (e.g. a dictionary lookup) as `T`; throws when absent.
    public func `as`<T: DBusDecodable>(_ type: T.Type = T.self) throws(DBusDecodingError) -> T {
        guard let v = self else { throw DBusDecodingError("value missing, expected \(T.self)") }
        return try T(dbusValue: v)
    }
}
