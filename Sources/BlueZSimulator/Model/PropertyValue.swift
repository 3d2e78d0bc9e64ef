// PropertyValue: the D-Bus property values BlueZ publishes, typed as BlueZ documents them.

// MARK: - PropertyValue

/// One property value as bluetoothd publishes it on D-Bus. Each case names the D-Bus signature
/// it is sent with, so the model stays bus-free while keeping BlueZ's exact types.
public enum PropertyValue: Sendable, Equatable, CustomStringConvertible {
    /// `b`
    case bool(Bool)
    /// `y`
    case byte(UInt8)
    /// `n` (RSSI, TxPower)
    case int16(Int16)
    /// `q` (MTU, Handle, Appearance)
    case uint16(UInt16)
    /// `u` (Class)
    case uint32(UInt32)
    /// `s`
    case string(String)
    /// `o`
    case objectPath(String)
    /// `ay`
    case bytes([UInt8])
    /// `as`
    case strings([String])
    /// `ao`
    case objectPaths([String])
    /// `a{qv}` whose variants hold `ay` (Device1.ManufacturerData).
    case manufacturerData([UInt16: [UInt8]])
    /// `a{sv}` whose variants hold `ay` (Device1.ServiceData).
    case serviceData([String: [UInt8]])
    /// `a{yv}` whose variants hold `ay` (Device1.AdvertisingData: AD type → data).
    case adStructures([UInt8: [UInt8]])
    /// `a{sv}` of basic values (LEAdvertisingManager1.SupportedCapabilities).
    indirect case options([String: PropertyValue])

    /// The D-Bus signature this value is sent with.
    public var signature: String {
        switch self {
        case .bool: "b"
        case .byte: "y"
        case .int16: "n"
        case .uint16: "q"
        case .uint32: "u"
        case .string: "s"
        case .objectPath: "o"
        case .bytes: "ay"
        case .strings: "as"
        case .objectPaths: "ao"
        case .manufacturerData: "a{qv}"
        case .serviceData: "a{sv}"
        case .adStructures: "a{yv}"
        case .options: "a{sv}"
        }
    }

    public var description: String {
        switch self {
        case .bool(let v): "\(v)"
        case .byte(let v): "byte \(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .uint32(let v): "uint32 \(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): "path \(v)"
        case .bytes(let v): "bytes \(v.hexString)"
        case .strings(let v): "\(v)"
        case .objectPaths(let v): "paths \(v)"
        case .manufacturerData(let v): "mfr \(v.mapValues(\.hexString))"
        case .serviceData(let v): "svc \(v.mapValues(\.hexString))"
        case .adStructures(let v): "ad \(v.mapValues(\.hexString))"
        case .options(let v): "options \(v.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })"
        }
    }

    // MARK: Accessors

    /// The Boolean, if this is `.bool`.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The bytes, if this is `.bytes`.
    public var bytesValue: [UInt8]? { if case .bytes(let v) = self { v } else { nil } }
    /// The string, if this is `.string` or `.objectPath`.
    public var stringValue: String? {
        switch self {
        case .string(let v), .objectPath(let v): v
        default: nil
        }
    }
    /// The RSSI/TxPower value, if this is `.int16`.
    public var int16Value: Int16? { if case .int16(let v) = self { v } else { nil } }
}

/// The properties of one object, by interface then property name.
public typealias InterfaceMap = [String: [String: PropertyValue]]

extension Sequence where Element == UInt8 {
    /// Lower-case hex, no separators.
    var hexString: String {
        var out = ""
        for b in self {
            let digits = Array("0123456789abcdef")
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return out
    }
}
