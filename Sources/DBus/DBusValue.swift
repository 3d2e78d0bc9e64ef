// The value model: one enum for every D-Bus type.

/// A D-Bus value of any type. Containers carry their element types so that empty arrays and
/// dicts keep their signature. Only `variant` is stored indirectly: scalars (a byte array's
/// elements above all) are held inline, without a heap box per value.
public enum DBusValue: Sendable, Equatable, CustomStringConvertible {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(DBusSignature)
    /// A Unix file descriptor, owned by the `FileDescriptor` object.
    case unixFD(FileDescriptor)
    /// An array whose elements all have type `element`.
    case array(element: DBusType, [DBusValue])
    /// A dict (`a{kv}`) with its entries in order.
    case dict(key: DBusType, value: DBusType, [DictEntry])
    /// A struct with at least one field.
    case `struct`([DBusValue])
    /// A variant holding a value of any type.
    indirect case variant(DBusValue)

    /// One entry of a `dict`.
    public struct DictEntry: Sendable, Equatable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's complete type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .bool: .bool
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let e, _): .array(e)
        case .dict(let k, let v, _): .dict(key: k, value: v)
        case .struct(let fields): .struct(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// The value's signature text.
    public var signature: String { type.signature }

    /// A `a{sv}` dict from a Swift dictionary, entries sorted by key for a stable order.
    public static func properties(_ dict: [String: DBusValue]) -> DBusValue {
        .dict(key: .string, value: .variant,
              dict.sorted { $0.key < $1.key }.map { DictEntry(.string($0.key), .variant($0.value)) })
    }

    /// Checks that every container's elements match its declared types (libdbus would
    /// otherwise reject the message while it is being built).
    func validate() throws(DBusDecodingError) {
        switch self {
        case .array(let e, let items):
            for item in items {
                guard item.matches(e) else {
                    throw DBusDecodingError("array element \(item.signature) does not match element type \(e)")
                }
                try item.validate()
            }
        case .dict(let k, let v, let entries):
            guard k.isBasic else { throw DBusDecodingError("dict key type \(k) is not basic") }
            for entry in entries {
                guard entry.key.matches(k), entry.value.matches(v) else {
                    throw DBusDecodingError("dict entry {\(entry.key.signature)\(entry.value.signature)} does not match a{\(k)\(v)}")
                }
                try entry.key.validate()
                try entry.value.validate()
            }
        case .struct(let fields):
            guard !fields.isEmpty else { throw DBusDecodingError("empty struct") }
            for f in fields { try f.validate() }
        case .variant(let inner): try inner.validate()
        default: break
        }
    }

    /// True when the value's type is `type` (cheap for basic values).
    func matches(_ type: DBusType) -> Bool {
        switch (self, type) {
        case (.byte, .byte), (.bool, .bool), (.int16, .int16), (.uint16, .uint16), (.int32, .int32),
             (.uint32, .uint32), (.int64, .int64), (.uint64, .uint64), (.double, .double),
             (.string, .string), (.objectPath, .objectPath), (.signature, .signature),
             (.unixFD, .unixFD), (.variant, .variant):
            return true
        case (.array(let e, _), .array(let t)): return e == t
        case (.dict(let k, let v, _), .dict(let tk, let tv)): return k == tk && v == tv
        case (.struct(let fields), .struct(let types)):
            guard fields.count == types.count else { return false }
            for (f, t) in zip(fields, types) where !f.matches(t) { return false }
            return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .bool(let v): "\(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "int32 \(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "double \(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): "path \(v)"
        case .signature(let v): "signature \"\(v)\""
        case .unixFD(let fd): "fd \(fd.rawValue)"
        case .array(_, let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dict(_, _, let entries): "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .struct(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let v): "<\(v)>"
        }
    }
}

/// A validated D-Bus object path (`/`, or `/`-separated elements of `[A-Za-z0-9_]`).
public struct ObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path text.
    public let rawValue: String

    /// Validates `text`; throws `DBusDecodingError` when it is not an object path.
    public init(_ text: String) throws(DBusDecodingError) {
        guard ObjectPath.isValid(text) else { throw DBusDecodingError("\"\(text)\" is not a valid object path") }
        rawValue = text
    }

    /// A path libdbus has already validated.
    @usableFromInline init(unchecked text: String) { rawValue = text }

    /// A literal path; an invalid literal is a programming error and traps.
    public init(stringLiteral value: String) {
        precondition(ObjectPath.isValid(value), "invalid object path literal \"\(value)\"")
        rawValue = value
    }

    /// The root path `/`.
    public static let root = ObjectPath(unchecked: "/")

    /// `self` followed by one more element.
    public func appending(_ element: String) throws(DBusDecodingError) -> ObjectPath {
        try ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// True when `self` is `ancestor` or lies below it.
    public func isDescendant(of ancestor: ObjectPath, orSelf: Bool = true) -> Bool {
        PathWorkProbe.compared()
        // Compared byte by byte, without making `ancestor + "/"` (a scan reports every
        // advertisement of a device below its adapter through here).
        let own = rawValue.utf8, prefix = ancestor.rawValue.utf8
        guard own.count >= prefix.count, own.starts(with: prefix) else { return false }
        if own.count == prefix.count { return orSelf }
        if prefix.count == 1 { return true }  // the root
        return own[own.index(own.startIndex, offsetBy: prefix.count)] == UInt8(ascii: "/")
    }

    /// Whether two paths have the same text (counted by `PathWorkProbe` when it counts).
    public static func == (a: ObjectPath, b: ObjectPath) -> Bool {
        PathWorkProbe.compared()
        return a.rawValue == b.rawValue
    }

    /// Hashes the path's text (counted by `PathWorkProbe` when it counts).
    public func hash(into hasher: inout Hasher) {
        PathWorkProbe.hashed()
        hasher.combine(rawValue)
    }

    public static func isValid(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.first == UInt8(ascii: "/") else { return false }
        if u.count == 1 { return true }
        guard u.last != UInt8(ascii: "/") else { return false }
        var previousSlash = false
        for c in u.dropFirst() {
            if c == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
            } else {
                previousSlash = false
                let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
                if !ok { return false }
            }
        }
        return true
    }

    public static func < (a: ObjectPath, b: ObjectPath) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }
}
