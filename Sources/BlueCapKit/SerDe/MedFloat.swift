// IEEE 11073-20601 SFLOAT (16-bit) and FLOAT (32-bit), the GATT medical number formats.

import Foundation

// MARK: - Shared

/// The special values of the IEEE 11073-20601 number formats.
public enum MedFloatSpecial: Sendable, Hashable {
    /// Not a number.
    case nan
    /// Not at this resolution (the value cannot be represented).
    case notAtThisResolution
    /// Positive infinity.
    case positiveInfinity
    /// Negative infinity.
    case negativeInfinity
    /// The reserved value.
    case reserved
}

/// The shape shared by ``MedFloat16`` and ``MedFloat32``: `value = mantissa × 10^exponent`.
protocol MedFloatFormat {
    static var mantissaBits: Int { get }
    static var exponentRange: ClosedRange<Int> { get }
    var mantissa: Int32 { get }
    var exponent: Int8 { get }
    init(unchecked mantissa: Int32, exponent: Int8)
}

extension MedFloatFormat {
    /// The largest mantissa magnitude that is not a special value.
    static var maxMantissa: Int32 { (Int32(1) << (mantissaBits - 1)) - 3 }

    /// The special value the mantissa encodes, if any (specials are defined at exponent 0).
    var special: MedFloatSpecial? {
        guard exponent == 0 else { return nil }
        switch mantissa {
        case Self.maxMantissa + 2: return .nan
        case Self.maxMantissa + 1: return .positiveInfinity
        case -(Self.maxMantissa + 3): return .notAtThisResolution
        case -(Self.maxMantissa + 2): return .reserved
        case -(Self.maxMantissa + 1): return .negativeInfinity
        default: return nil
        }
    }

    /// `mantissa × 10^exponent`; NaN for NaN, NRes and reserved; ±infinity for the infinities.
    var computedDoubleValue: Double {
        switch special {
        case .nan, .notAtThisResolution, .reserved: return .nan
        case .positiveInfinity: return .infinity
        case .negativeInfinity: return -.infinity
        case nil:
            let scale = pow(10.0, Double(abs(Int(exponent))))
            return exponent < 0 ? Double(mantissa) / scale : Double(mantissa) * scale
        }
    }

    /// Encodes a special value.
    init(specialValue: MedFloatSpecial) {
        let m = Self.maxMantissa
        switch specialValue {
        case .nan: self.init(unchecked: m + 2, exponent: 0)
        case .positiveInfinity: self.init(unchecked: m + 1, exponent: 0)
        case .notAtThisResolution: self.init(unchecked: -(m + 3), exponent: 0)
        case .reserved: self.init(unchecked: -(m + 2), exponent: 0)
        case .negativeInfinity: self.init(unchecked: -(m + 1), exponent: 0)
        }
    }

    /// The most precise encoding of `value`, with trailing decimal zeros removed from the mantissa;
    /// NRes when the value is out of range.
    init(approximating value: Double) {
        if value.isNaN { self.init(specialValue: .nan); return }
        if value == .infinity { self.init(specialValue: .positiveInfinity); return }
        if value == -.infinity { self.init(specialValue: .negativeInfinity); return }
        for exponent in Self.exponentRange {
            let scale = pow(10.0, Double(abs(exponent)))
            let scaled = exponent < 0 ? value * scale : value / scale
            let rounded = scaled.rounded()
            guard abs(rounded) <= Double(Self.maxMantissa) else { continue }
            var mantissa = Int32(rounded)
            var e = exponent
            while mantissa != 0, mantissa % 10 == 0, e < Self.exponentRange.upperBound {
                mantissa /= 10
                e += 1
            }
            if mantissa == 0 { e = 0 }
            self.init(unchecked: mantissa, exponent: Int8(e))
            return
        }
        self.init(specialValue: .notAtThisResolution)
    }
}

// MARK: - SFLOAT

/// IEEE 11073-20601 SFLOAT: 16 bits, a 4-bit signed exponent over a 12-bit signed mantissa,
/// little-endian. Used by GATT medical profiles (blood pressure, glucose, weight).
public struct MedFloat16: FixedWidthDeserializable, Hashable, MedFloatFormat, CustomStringConvertible {
    static let mantissaBits = 12
    static let exponentRange = -8...7

    /// The signed mantissa, −2048…2047.
    public let mantissa: Int32
    /// The signed decimal exponent, −8…7.
    public let exponent: Int8

    init(unchecked mantissa: Int32, exponent: Int8) {
        self.mantissa = mantissa
        self.exponent = exponent
    }

    /// `mantissa × 10^exponent`; nil when either is out of range.
    public init?(mantissa: Int32, exponent: Int8) {
        guard (-2048...2047).contains(mantissa), (-8...7).contains(Int(exponent)) else { return nil }
        self.init(unchecked: mantissa, exponent: exponent)
    }

    /// The closest SFLOAT to `value` (NRes when out of range; NaN and infinities map to their specials).
    public init(_ value: Double) { self.init(approximating: value) }

    /// A special value.
    public init(special: MedFloatSpecial) { self.init(specialValue: special) }

    /// The special value encoded, if any.
    public var specialValue: MedFloatSpecial? { special }

    /// The numeric value (NaN for NaN, NRes and reserved).
    public var doubleValue: Double { computedDoubleValue }

    /// 2 bytes.
    public static var size: Int { 2 }

    /// Decodes 2 little-endian bytes.
    public init(deserializing data: Data) throws(SerDeError) {
        guard data.count == 2 else { throw .wrongLength(MedFloat16.self, expected: 2, actual: data.count) }
        let raw = try UInt16(deserializing: data)
        let mantissa = Int32(Int16(bitPattern: raw << 4) >> 4)
        let exponent = Int8(Int16(bitPattern: raw) >> 12)
        self.init(unchecked: mantissa, exponent: exponent)
    }

    /// The 2-byte little-endian encoding.
    public func serialized() -> Data {
        let raw = UInt16(bitPattern: Int16(exponent) << 12) | (UInt16(truncatingIfNeeded: mantissa) & 0x0FFF)
        return raw.serialized()
    }

    /// `mantissa e exponent`, or the special value's name.
    public var description: String { special.map { "\($0)" } ?? "\(mantissa)e\(exponent)" }
}

// MARK: - FLOAT

/// IEEE 11073-20601 FLOAT: 32 bits, an 8-bit signed exponent over a 24-bit signed mantissa,
/// little-endian. Used by the Health Thermometer's Temperature Measurement.
public struct MedFloat32: FixedWidthDeserializable, Hashable, MedFloatFormat, CustomStringConvertible {
    static let mantissaBits = 24
    static let exponentRange = -128...127

    /// The signed mantissa, −8388608…8388607.
    public let mantissa: Int32
    /// The signed decimal exponent.
    public let exponent: Int8

    init(unchecked mantissa: Int32, exponent: Int8) {
        self.mantissa = mantissa
        self.exponent = exponent
    }

    /// `mantissa × 10^exponent`; nil when the mantissa does not fit in 24 bits.
    public init?(mantissa: Int32, exponent: Int8) {
        guard (-8_388_608...8_388_607).contains(mantissa) else { return nil }
        self.init(unchecked: mantissa, exponent: exponent)
    }

    /// The closest FLOAT to `value` (NRes when out of range; NaN and infinities map to their specials).
    public init(_ value: Double) { self.init(approximating: value) }

    /// A special value.
    public init(special: MedFloatSpecial) { self.init(specialValue: special) }

    /// The special value encoded, if any.
    public var specialValue: MedFloatSpecial? { special }

    /// The numeric value (NaN for NaN, NRes and reserved).
    public var doubleValue: Double { computedDoubleValue }

    /// 4 bytes.
    public static var size: Int { 4 }

    /// Decodes 4 little-endian bytes.
    public init(deserializing data: Data) throws(SerDeError) {
        guard data.count == 4 else { throw .wrongLength(MedFloat32.self, expected: 4, actual: data.count) }
        let raw = try UInt32(deserializing: data)
        let mantissa = Int32(bitPattern: raw << 8) >> 8
        let exponent = Int8(truncatingIfNeeded: Int32(bitPattern: raw) >> 24)
        self.init(unchecked: mantissa, exponent: exponent)
    }

    /// The 4-byte little-endian encoding.
    public func serialized() -> Data {
        let raw = UInt32(UInt8(bitPattern: exponent)) << 24 | (UInt32(bitPattern: mantissa) & 0x00FF_FFFF)
        return raw.serialized()
    }

    /// `mantissa e exponent`, or the special value's name.
    public var description: String { special.map { "\($0)" } ?? "\(mantissa)e\(exponent)" }
}
