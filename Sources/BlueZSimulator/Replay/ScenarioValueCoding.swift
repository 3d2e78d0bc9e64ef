// ScenarioValueCoding: D-Bus values to and from the JSON of a scenario file.
import DBus
import Foundation

// MARK: - ScenarioValueCoding

/// A D-Bus value in a scenario file is written as its JSON shape under a known type:
/// numbers and booleans as JSON numbers and booleans, strings / object paths / signatures as
/// strings, `ay` as a hex string (`"0a1b"`), other arrays and structs as JSON arrays, dicts with
/// string or object-path keys as JSON objects (other dicts as arrays of `[key, value]` pairs), a
/// variant as `["signature", value]`. A message's arguments are written as variants.
enum ScenarioValueCoding {
    // MARK: Encoding

    /// The JSON shape of `value` (its type is implied by the context).
    static func encode(_ value: DBusValue) -> Any {
        switch value {
        case .byte(let v): return Int(v)
        case .bool(let v): return v
        case .int16(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int64(let v): return v
        case .uint64(let v): return v
        case .double(let v): return v
        case .string(let v): return v
        case .objectPath(let v): return v.rawValue
        case .signature(let v): return v.rawValue
        case .unixFD: return NSNull()
        case .array(.byte, let items):
            return items.map { if case .byte(let b) = $0 { String(format: "%02x", b) } else { "" } }.joined()
        case .array(_, let items): return items.map(encode)
        case .dict(let key, _, let entries):
            if key == .string || key == .objectPath {
                var out: [String: Any] = [:]
                for e in entries { out[keyText(e.key)] = encode(e.value) }
                return out
            }
            return entries.map { [encode($0.key), encode($0.value)] }
        case .struct(let fields): return fields.map(encode)
        case .variant(let inner): return [inner.signature, encode(inner)]
        }
    }

    /// `values` as a list of variants (a message's arguments).
    static func encodeArguments(_ values: [DBusValue]) -> [Any] { values.map { encode(.variant($0)) } }

    private static func keyText(_ key: DBusValue) -> String {
        switch key {
        case .string(let s): s
        case .objectPath(let p): p.rawValue
        default: "\(key)"
        }
    }

    // MARK: Decoding

    /// The value of type `type` from its JSON shape; throws naming `field` and what was wrong.
    static func decode(_ json: Any, as type: DBusType, field: String) throws(ScenarioFieldError) -> DBusValue {
        func bad(_ expected: String) -> ScenarioFieldError {
            ScenarioFieldError(field: field, problem: "expected \(expected) for type \(type.signature), found \(describe(json))")
        }
        switch type {
        case .bool:
            guard let v = json as? Bool else { throw bad("true or false") }
            return .bool(v)
        case .byte: return .byte(try integer(json, field: field, type: type))
        case .int16: return .int16(try integer(json, field: field, type: type))
        case .uint16: return .uint16(try integer(json, field: field, type: type))
        case .int32: return .int32(try integer(json, field: field, type: type))
        case .uint32: return .uint32(try integer(json, field: field, type: type))
        case .int64: return .int64(try integer(json, field: field, type: type))
        case .uint64: return .uint64(try integer(json, field: field, type: type))
        case .double:
            if let d = json as? Double { return .double(d) }
            guard let i = integerValue(json) else { throw bad("a number") }
            return .double(Double(i))
        case .string:
            guard let s = json as? String else { throw bad("a string") }
            return .string(s)
        case .objectPath:
            guard let s = json as? String, let p = try? ObjectPath(s) else { throw bad("an object path") }
            return .objectPath(p)
        case .signature:
            guard let s = json as? String, let g = try? DBusSignature(s) else { throw bad("a signature") }
            return .signature(g)
        case .unixFD:
            throw ScenarioFieldError(field: field, problem: "file descriptors (type h) cannot be replayed")
        case .array(.byte):
            guard let s = json as? String, let bytes = hexBytes(s) else { throw bad("a hex string such as \"0a1b\"") }
            return .array(element: .byte, bytes.map { .byte($0) })
        case .array(let element):
            guard let items = json as? [Any] else { throw bad("a JSON array") }
            var out: [DBusValue] = []
            for (i, item) in items.enumerated() { out.append(try decode(item, as: element, field: "\(field)[\(i)]")) }
            return .array(element: element, out)
        case .dict(let key, let value):
            var entries: [DBusValue.DictEntry] = []
            if let object = json as? [String: Any], key == .string || key == .objectPath {
                for k in object.keys.sorted() {
                    entries.append(.init(try decode(k, as: key, field: "\(field).key"),
                                         try decode(object[k]!, as: value, field: "\(field).\(k)")))
                }
            } else if let pairs = json as? [Any] {
                for (i, pair) in pairs.enumerated() {
                    guard let kv = pair as? [Any], kv.count == 2 else { throw bad("[key, value] pairs") }
                    entries.append(.init(try decode(kv[0], as: key, field: "\(field)[\(i)].key"),
                                         try decode(kv[1], as: value, field: "\(field)[\(i)].value")))
                }
            } else {
                throw bad("a JSON object or [key, value] pairs")
            }
            return .dict(key: key, value: value, entries)
        case .struct(let fields):
            guard let items = json as? [Any], items.count == fields.count else { throw bad("an array of \(fields.count) fields") }
            var out: [DBusValue] = []
            for (i, (item, t)) in zip(items, fields).enumerated() { out.append(try decode(item, as: t, field: "\(field)[\(i)]")) }
            return .struct(out)
        case .variant:
            guard let pair = json as? [Any], pair.count == 2, let text = pair[0] as? String else {
                throw bad("[\"signature\", value]")
            }
            guard let sig = try? DBusSignature(text), sig.types.count == 1 else {
                throw ScenarioFieldError(field: field, problem: "\"\(text)\" is not the signature of one complete type")
            }
            return .variant(try decode(pair[1], as: sig.types[0], field: field))
        }
    }

    /// A list of variants (a message's arguments), unwrapped.
    static func decodeArguments(_ json: Any?, field: String) throws(ScenarioFieldError) -> [DBusValue] {
        guard let json else { return [] }
        guard let items = json as? [Any] else {
            throw ScenarioFieldError(field: field, problem: "expected a JSON array of [\"signature\", value], found \(describe(json))")
        }
        var out: [DBusValue] = []
        for (i, item) in items.enumerated() {
            guard case .variant(let v) = try decode(item, as: .variant, field: "\(field)[\(i)]") else { continue }
            out.append(v)
        }
        return out
    }

    private static func integer<T: FixedWidthInteger>(_ json: Any, field: String, type: DBusType) throws(ScenarioFieldError) -> T {
        if let v = integerValue(json).flatMap({ T(exactly: $0) }) { return v }
        throw ScenarioFieldError(field: field, problem: "expected an integer in range for type \(type.signature), found \(describe(json))")
    }

    /// A JSON number as a whole number (Foundation hands out Int, Int64, UInt64, Double or NSNumber).
    static func integerValue(_ json: Any) -> Int64? {
        switch json {
        case let v as Int: Int64(v)
        case let v as Int64: v
        case let v as UInt64: Int64(exactly: v)
        case let v as Double: Int64(exactly: v)
        case let n as NSNumber: Int64(exactly: n.doubleValue)
        default: nil
        }
    }

    private static func hexBytes(_ s: String) -> [UInt8]? {
        let chars = Array(s.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let b = UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
            i += 2
        }
        return out
    }

    static func describe(_ json: Any) -> String {
        if json is NSNull { return "null" }
        if let s = json as? String { return "\"\(s.prefix(40))\"" }
        if json is [Any] { return "an array" }
        if json is [String: Any] { return "an object" }
        return "\(json)"
    }
}
