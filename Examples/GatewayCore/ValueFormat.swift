// ValueFormat: how a characteristic's bytes become JSON, and a `/set` value becomes bytes.

import BlueCapKit
import ExampleSupport
import Foundation

/// The type of a characteristic's value: a built-in profile's (BlueCapKit's SerDe through
/// ``ProfileManager``), a fixed-width little-endian integer, UTF-8 text, or raw bytes.
package enum ValueFormat: String, Sendable, Decodable, CaseIterable {
    /// The built-in profile of the characteristic's UUID (TI SensorTag, Bluetooth SIG): named fields.
    case profile
    case uint8, int8, uint16, int16, uint32, int32
    /// UTF-8 text.
    case utf8
    /// Raw bytes as lowercase hex.
    case hex

    /// The built-in profiles, registered once.
    static let profiles: ProfileManager = {
        let m = ProfileManager()
        m.registerBuiltInProfiles()
        return m
    }()

    /// The format to use for `uuid` when the configuration names none: its profile when one is
    /// built in, else hex.
    static func automatic(for uuid: BLEUUID, service: BLEUUID?) -> ValueFormat {
        profiles.characteristic(uuid, inService: service) != nil ? .profile : .hex
    }

    /// The value as JSON, or nil when the bytes do not decode as this format.
    func json(_ data: Data, uuid: BLEUUID, service: BLEUUID?) -> JSON? {
        switch self {
        case .profile:
            guard let fields = Self.profiles.characteristic(uuid, inService: service)?.stringValue(data) else { return nil }
            return .object(fields.sorted { $0.key < $1.key }.map { ($0.key, Self.number(or: $0.value)) })
        case .uint8: return data.count == 1 ? .integer(Int(data[data.startIndex])) : nil
        case .int8: return data.count == 1 ? .integer(Int(Int8(bitPattern: data[data.startIndex]))) : nil
        case .uint16: return SerDe.deserialize(data, as: UInt16.self).map { .integer(Int($0)) }
        case .int16: return SerDe.deserialize(data, as: Int16.self).map { .integer(Int($0)) }
        case .uint32: return SerDe.deserialize(data, as: UInt32.self).map { .integer(Int($0)) }
        case .int32: return SerDe.deserialize(data, as: Int32.self).map { .integer(Int($0)) }
        case .utf8: return String(data: data, encoding: .utf8).map(JSON.string)
        case .hex: return .string(SerDe.hexString(data))
        }
    }

    /// The field names a profile value has (for Home Assistant discovery), nil for the others.
    func fields(of data: Data, uuid: BLEUUID, service: BLEUUID?) -> [String]? {
        guard self == .profile else { return nil }
        return Self.profiles.characteristic(uuid, inService: service)?.stringValue(data)?.keys.sorted()
    }

    /// The integer range of an integer format.
    var range: ClosedRange<Int>? {
        switch self {
        case .uint8: 0...255
        case .int8: -128...127
        case .uint16: 0...65535
        case .int16: -32768...32767
        case .uint32: 0...Int(UInt32.max)
        case .int32: Int(Int32.min)...Int(Int32.max)
        default: nil
        }
    }

    /// The bytes of an integer for this format (little-endian), nil when out of range.
    func bytes(integer: Int) -> Data? {
        guard let range, range.contains(integer) else { return nil }
        switch self {
        case .uint8, .int8: return Data([UInt8(truncatingIfNeeded: integer)])
        case .uint16, .int16: return withUnsafeBytes(of: UInt16(truncatingIfNeeded: integer).littleEndian) { Data($0) }
        default: return withUnsafeBytes(of: UInt32(truncatingIfNeeded: integer).littleEndian) { Data($0) }
        }
    }

    /// The bytes for named string fields through the profile, nil when they do not parse.
    func bytes(fields: [String: String], uuid: BLEUUID, service: BLEUUID?) -> Data? {
        guard self == .profile else { return nil }
        return Self.profiles.characteristic(uuid, inService: service)?.data(fromString: fields)
    }

    /// A profile field's string as a JSON number when it is one.
    private static func number(or text: String) -> JSON {
        if let i = Int(text) { return .integer(i) }
        if let d = Double(text), d.isFinite { return .number(d) }
        return .string(text)
    }
}
