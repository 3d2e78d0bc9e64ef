// Deserializable: types with a byte encoding, and the conformances of the standard scalar types.

import Foundation

// MARK: - Protocols

/// A value with a byte encoding, as carried by a GATT characteristic value
/// (`org.bluez.GattCharacteristic1.ReadValue` / `WriteValue`, the `Value` property).
///
/// Integers and floating-point numbers use little-endian order, as GATT does.
/// Decoding never traps: wrong lengths and invalid contents throw ``SerDeError``.
public protocol Deserializable: Sendable {
    /// The encoded size in bytes, or nil when the encoding has a variable length (for example `String`).
    static var encodedSize: Int? { get }
    /// Decodes a value from exactly the bytes of `data` (a longer or shorter buffer is an error).
    init(deserializing data: Data) throws(SerDeError)
    /// The value's encoding.
    func serialized() -> Data
}

/// A ``Deserializable`` type whose encoding always has the same length, usable as an element of
/// ``RawArrayDeserializable`` and ``RawPairDeserializable`` values.
public protocol FixedWidthDeserializable: Deserializable {
    /// The encoded size in bytes.
    static var size: Int { get }
}

extension FixedWidthDeserializable {
    /// Equal to ``FixedWidthDeserializable/size``.
    public static var encodedSize: Int? { size }
}

// MARK: - Integers

/// Little-endian integer decoding shared by every fixed-width integer conformance.
extension FixedWidthInteger where Self: FixedWidthDeserializable {
    /// The integer's width in bytes.
    public static var size: Int { bitWidth / 8 }

    /// Decodes a little-endian integer from exactly ``size`` bytes.
    public init(deserializing data: Data) throws(SerDeError) {
        guard data.count == Self.size else {
            throw .wrongLength(Self.self, expected: Self.size, actual: data.count)
        }
        var magnitude: Magnitude = 0
        for (offset, byte) in data.enumerated() {
            magnitude |= Magnitude(byte) << (8 * offset)
        }
        self.init(truncatingIfNeeded: magnitude)
    }

    /// The little-endian encoding, ``size`` bytes long.
    public func serialized() -> Data {
        withUnsafeBytes(of: littleEndian) { Data($0) }
    }
}

extension Int8: FixedWidthDeserializable {}
extension UInt8: FixedWidthDeserializable {}
extension Int16: FixedWidthDeserializable {}
extension UInt16: FixedWidthDeserializable {}
extension Int32: FixedWidthDeserializable {}
extension UInt32: FixedWidthDeserializable {}
extension Int64: FixedWidthDeserializable {}
extension UInt64: FixedWidthDeserializable {}

// MARK: - Floating point

extension Float: FixedWidthDeserializable {
    /// 4 bytes: IEEE 754 binary32.
    public static var size: Int { 4 }

    /// Decodes an IEEE 754 binary32 from 4 little-endian bytes (NaN payloads and infinities preserved).
    public init(deserializing data: Data) throws(SerDeError) {
        guard data.count == 4 else { throw .wrongLength(Float.self, expected: 4, actual: data.count) }
        self.init(bitPattern: try UInt32(deserializing: data))
    }

    /// The little-endian IEEE 754 binary32 encoding.
    public func serialized() -> Data { bitPattern.serialized() }
}

extension Double: FixedWidthDeserializable {
    /// 8 bytes: IEEE 754 binary64.
    public static var size: Int { 8 }

    /// Decodes an IEEE 754 binary64 from 8 little-endian bytes (NaN payloads and infinities preserved).
    public init(deserializing data: Data) throws(SerDeError) {
        guard data.count == 8 else { throw .wrongLength(Double.self, expected: 8, actual: data.count) }
        self.init(bitPattern: try UInt64(deserializing: data))
    }

    /// The little-endian IEEE 754 binary64 encoding.
    public func serialized() -> Data { bitPattern.serialized() }
}

// MARK: - String

extension String: Deserializable {
    /// Strings have a variable length.
    public static var encodedSize: Int? { nil }

    /// Decodes UTF-8 bytes; invalid UTF-8 throws ``SerDeError/invalidUTF8(byteCount:)``.
    /// Trailing NUL bytes, which some devices pad with, are kept.
    public init(deserializing data: Data) throws(SerDeError) {
        guard let string = String(validating: data, as: UTF8.self) else {
            throw .invalidUTF8(byteCount: data.count)
        }
        self = string
    }

    /// The UTF-8 bytes of the string.
    public func serialized() -> Data { Data(utf8) }
}
