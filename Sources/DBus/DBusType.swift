// A single complete D-Bus type, and signatures made of them.

/// One complete D-Bus type (the grammar of the D-Bus specification's "Type System").
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, bool, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    /// `a<element>`.
    case array(DBusType)
    /// `a{<key><value>}`; the key is a basic type.
    case dict(key: DBusType, value: DBusType)
    /// `(<fields>)`, at least one field.
    case `struct`([DBusType])
    /// `v`.
    case variant

    /// The type's signature text, e.g. `a{sv}`.
    public var signature: String {
        var out = ""
        append(to: &out)
        return out
    }

    public var description: String { signature }

    /// Basic types may be dict keys.
    public var isBasic: Bool {
        switch self {
        case .array, .dict, .struct, .variant: false
        default: true
        }
    }

    func append(to out: inout String) {
        switch self {
        case .byte: out += "y"
        case .bool: out += "b"
        case .int16: out += "n"
        case .uint16: out += "q"
        case .int32: out += "i"
        case .uint32: out += "u"
        case .int64: out += "x"
        case .uint64: out += "t"
        case .double: out += "d"
        case .string: out += "s"
        case .objectPath: out += "o"
        case .signature: out += "g"
        case .unixFD: out += "h"
        case .variant: out += "v"
        case .array(let e): out += "a"; e.append(to: &out)
        case .dict(let k, let v): out += "a{"; k.append(to: &out); v.append(to: &out); out += "}"
        case .struct(let fields):
            out += "("
            for f in fields { f.append(to: &out) }
            out += ")"
        }
    }

    /// The type code libdbus uses for this type's first character.
    var code: UInt8 {
        switch self {
        case .byte: UInt8(ascii: "y")
        case .bool: UInt8(ascii: "b")
        case .int16: UInt8(ascii: "n")
        case .uint16: UInt8(ascii: "q")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .signature: UInt8(ascii: "g")
        case .unixFD: UInt8(ascii: "h")
        case .variant: UInt8(ascii: "v")
        case .array, .dict: UInt8(ascii: "a")
        case .struct: UInt8(ascii: "r")
        }
    }
}

// MARK: - Signatures

/// A validated D-Bus signature: zero or more complete types (a message body's signature),
/// at most 255 bytes, arrays and structs each nested at most 32 deep.
public struct DBusSignature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The signature text.
    public let rawValue: String
    /// The complete types, in order.
    public let types: [DBusType]

    /// Parses and validates `text`; throws `DBusSignatureError` naming the fault.
    public init(_ text: String) throws(DBusSignatureError) {
        var parser = SignatureParser(text)
        self.types = try parser.parseAll()
        self.rawValue = text
    }

    /// A signature made of `types`.
    public init(types: [DBusType]) {
        self.types = types
        self.rawValue = types.map(\.signature).joined()
    }

    /// A literal signature; an invalid literal is a programming error and traps.
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("invalid D-Bus signature literal \"\(value)\": \(error)") }
    }

    /// The empty signature (no arguments).
    public static let empty = DBusSignature(types: [])

    /// The single complete type, or nil when the signature holds zero or several.
    public var singleType: DBusType? { types.count == 1 ? types[0] : nil }

    public var description: String { rawValue }
}

/// Why a signature was rejected.
public struct DBusSignatureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rejected text.
    public var signature: String
    /// What is wrong with it.
    public var reason: String
    public var description: String { "invalid D-Bus signature \"\(signature)\": \(reason)" }
}

struct SignatureParser {
    private let bytes: [UInt8]
    private let text: String
    private var i = 0

    init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    private func fail(_ reason: String) -> DBusSignatureError { DBusSignatureError(signature: text, reason: reason) }

    mutating func parseAll() throws(DBusSignatureError) -> [DBusType] {
        guard bytes.count <= 255 else { throw fail("longer than 255 bytes") }
        var types: [DBusType] = []
        while i < bytes.count { types.append(try parseOne(arrayDepth: 0, structDepth: 0)) }
        return types
    }

    /// Parses exactly one complete type, throwing if `text` holds anything else.
    static func single(_ text: String) throws(DBusSignatureError) -> DBusType {
        var p = SignatureParser(text)
        let types = try p.parseAll()
        guard types.count == 1 else {
            throw DBusSignatureError(signature: text, reason: "expected exactly one complete type, found \(types.count)")
        }
        return types[0]
    }

    private mutating func parseOne(arrayDepth: Int, structDepth: Int) throws(DBusSignatureError) -> DBusType {
        guard i < bytes.count else { throw fail("ends inside a type") }
        let c = bytes[i]
        i += 1
        switch c {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .bool
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrayDepth < 32 else { throw fail("arrays nested deeper than 32") }
            if i < bytes.count, bytes[i] == UInt8(ascii: "{") {
                i += 1
                guard structDepth < 32 else { throw fail("containers nested deeper than 32") }
                let key = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard key.isBasic else { throw fail("dict key \(key) is not a basic type") }
                guard i < bytes.count, bytes[i] != UInt8(ascii: "}") else { throw fail("dict entry needs a key and a value") }
                let value = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard i < bytes.count, bytes[i] == UInt8(ascii: "}") else { throw fail("dict entry must hold exactly two types") }
                i += 1
                return .dict(key: key, value: value)
            }
            return .array(try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < 32 else { throw fail("structs nested deeper than 32") }
            var fields: [DBusType] = []
            while true {
                guard i < bytes.count else { throw fail("unclosed struct") }
                if bytes[i] == UInt8(ascii: ")") { i += 1; break }
                fields.append(try parseOne(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
            guard !fields.isEmpty else { throw fail("empty struct") }
            return .struct(fields)
        case UInt8(ascii: "{"): throw fail("dict entry outside an array")
        case UInt8(ascii: ")"), UInt8(ascii: "}"): throw fail("unbalanced '\(Character(Unicode.Scalar(c)))'")
        default: throw fail("unknown type code '\(Character(Unicode.Scalar(c)))'")
        }
    }
}
