// Raw-value backed types: one raw value, an array, a pair, a pair of arrays.

import Foundation

// MARK: - One raw value

/// A type backed by one ``Deserializable`` raw value, typically an enum:
/// `enum Enabled: UInt8, RawDeserializable { case no = 0, yes = 1 }`.
///
/// Decoding reads the raw value, then `init?(rawValue:)`; a rejected raw value throws
/// ``SerDeError/invalidRawValue(type:rawValue:)``.
public protocol RawDeserializable: RawRepresentable, Deserializable where RawValue: Deserializable {}

extension RawDeserializable {
    /// The raw value's encoded size.
    public static var encodedSize: Int? { RawValue.encodedSize }

    /// Decodes the raw value, then builds the type from it.
    public init(deserializing data: Data) throws(SerDeError) {
        let raw = try RawValue(deserializing: data)
        guard let value = Self(rawValue: raw) else {
            throw .invalidRawValue(type: String(describing: Self.self), rawValue: String(describing: raw))
        }
        self = value
    }

    /// The raw value's encoding.
    public func serialized() -> Data { rawValue.serialized() }
}

// MARK: - Array of raw values

/// A type made of exactly ``size`` raw values of one fixed-width type, encoded back to back
/// (for example the SensorTag accelerometer sample, 3 × `Int8`).
public protocol RawArrayDeserializable: Deserializable {
    /// The element type.
    associatedtype RawType: FixedWidthDeserializable
    /// The number of elements.
    static var size: Int { get }
    /// The elements, ``size`` of them.
    var rawValue: [RawType] { get }
    /// Builds the value from ``size`` elements; nil when the elements are out of range.
    init?(rawValue: [RawType])
}

extension RawArrayDeserializable {
    /// `size × RawType.size`.
    public static var encodedSize: Int? { size * RawType.size }

    /// Decodes ``size`` elements, then builds the type from them.
    public init(deserializing data: Data) throws(SerDeError) {
        let elements = try SerDe.elements(RawType.self, count: Self.size, from: data, for: Self.self)
        guard let value = Self(rawValue: elements) else {
            throw .invalidRawValue(type: String(describing: Self.self), rawValue: String(describing: elements))
        }
        self = value
    }

    /// The elements' encodings back to back.
    public func serialized() -> Data { SerDe.serialize(rawValue) }
}

// MARK: - Pair of raw values

/// A type made of two fixed-width raw values, encoded back to back.
public protocol RawPairDeserializable: Deserializable {
    /// The first value's type.
    associatedtype RawType1: FixedWidthDeserializable
    /// The second value's type.
    associatedtype RawType2: FixedWidthDeserializable
    /// The first value.
    var rawValue1: RawType1 { get }
    /// The second value.
    var rawValue2: RawType2 { get }
    /// Builds the value from its two raw values; nil when they are out of range.
    init?(rawValue1: RawType1, rawValue2: RawType2)
}

extension RawPairDeserializable {
    /// `RawType1.size + RawType2.size`.
    public static var encodedSize: Int? { RawType1.size + RawType2.size }

    /// Decodes both raw values, then builds the type from them.
    public init(deserializing data: Data) throws(SerDeError) {
        let total = RawType1.size + RawType2.size
        guard data.count == total else { throw .wrongLength(Self.self, expected: total, actual: data.count) }
        let bytes = Data(data)
        let first = try RawType1(deserializing: bytes.prefix(RawType1.size))
        let second = try RawType2(deserializing: bytes.suffix(RawType2.size))
        guard let value = Self(rawValue1: first, rawValue2: second) else {
            throw .invalidRawValue(type: String(describing: Self.self), rawValue: "(\(first), \(second))")
        }
        self = value
    }

    /// The two encodings back to back.
    public func serialized() -> Data { rawValue1.serialized() + rawValue2.serialized() }
}

// MARK: - Pair of raw arrays

/// A type made of two arrays of fixed-width raw values, ``size1`` then ``size2`` elements
/// (for example a calibration block of unsigned then signed coefficients).
public protocol RawArrayPairDeserializable: Deserializable {
    /// The first array's element type.
    associatedtype RawType1: FixedWidthDeserializable
    /// The second array's element type.
    associatedtype RawType2: FixedWidthDeserializable
    /// The first array's element count.
    static var size1: Int { get }
    /// The second array's element count.
    static var size2: Int { get }
    /// The first array, ``size1`` elements.
    var rawValue1: [RawType1] { get }
    /// The second array, ``size2`` elements.
    var rawValue2: [RawType2] { get }
    /// Builds the value from both arrays; nil when they are out of range.
    init?(rawValue1: [RawType1], rawValue2: [RawType2])
}

extension RawArrayPairDeserializable {
    /// `size1 × RawType1.size + size2 × RawType2.size`.
    public static var encodedSize: Int? { size1 * RawType1.size + size2 * RawType2.size }

    /// Decodes both arrays, then builds the type from them.
    public init(deserializing data: Data) throws(SerDeError) {
        let split = Self.size1 * RawType1.size
        let total = split + Self.size2 * RawType2.size
        guard data.count == total else { throw .wrongLength(Self.self, expected: total, actual: data.count) }
        let bytes = Data(data)
        let first = try SerDe.elements(RawType1.self, count: Self.size1, from: bytes.prefix(split), for: Self.self)
        let second = try SerDe.elements(RawType2.self, count: Self.size2, from: bytes.dropFirst(split), for: Self.self)
        guard let value = Self(rawValue1: first, rawValue2: second) else {
            throw .invalidRawValue(type: String(describing: Self.self), rawValue: "(\(first), \(second))")
        }
        self = value
    }

    /// Both arrays' encodings back to back.
    public func serialized() -> Data { SerDe.serialize(rawValue1) + SerDe.serialize(rawValue2) }
}
