// SerDe: the entry points that turn typed values into characteristic bytes and back.

import Foundation

/// Serialization and deserialization of characteristic values.
///
/// `serialize` builds the bytes for `org.bluez.GattCharacteristic1.WriteValue` (or for a local
/// characteristic's `Value`); `deserialize` returns nil and `decode` throws a ``SerDeError`` when
/// bytes received from `ReadValue` or a `PropertiesChanged` `Value` do not fit the type.
/// Neither traps on any input.
public enum SerDe {
    // MARK: Serialize

    /// The encoding of any ``Deserializable`` value: integers, floats, strings and every `Raw…` type.
    public static func serialize<T: Deserializable>(_ value: T) -> Data {
        value.serialized()
    }

    /// The encodings of `values` back to back.
    public static func serialize<T: FixedWidthDeserializable>(_ values: [T]) -> Data {
        var data = Data(capacity: values.count * T.size)
        for value in values { data.append(value.serialized()) }
        return data
    }

    // MARK: Deserialize (optional)

    /// Decodes `data` as `T`, or nil when the length or contents do not fit.
    public static func deserialize<T: Deserializable>(_ data: Data, as type: T.Type = T.self) -> T? {
        try? T(deserializing: data)
    }

    /// Decodes `data` as consecutive `T` values, or nil when its length is not a multiple of `T.size`.
    public static func deserialize<T: FixedWidthDeserializable>(_ data: Data, as type: [T].Type = [T].self) -> [T]? {
        try? decode([T].self, from: data)
    }

    // MARK: Decode (throwing)

    /// Decodes `data` as `T`, throwing a ``SerDeError`` that says what was expected.
    public static func decode<T: Deserializable>(_ type: T.Type, from data: Data) throws(SerDeError) -> T {
        try T(deserializing: data)
    }

    /// Decodes `data` as consecutive `T` values; a length that is not a multiple of `T.size` throws.
    public static func decode<T: FixedWidthDeserializable>(_ type: [T].Type, from data: Data) throws(SerDeError) -> [T] {
        let remainder = data.count % T.size
        guard remainder == 0 else {
            throw .wrongLength([T].self, expected: data.count - remainder + T.size, actual: data.count)
        }
        return try elements(T.self, count: data.count / T.size, from: data, for: [T].self)
    }

    /// Decodes one `T` from `data` starting at byte `offset`, ignoring any bytes after it
    /// (for reading one field of a larger record).
    public static func decode<T: FixedWidthDeserializable>(_ type: T.Type, from data: Data, at offset: Int) throws(SerDeError) -> T {
        guard offset >= 0, offset <= data.count, data.count - offset >= T.size else {
            throw .wrongLength(T.self, expected: max(offset, 0) + T.size, actual: data.count, atLeast: true)
        }
        let start = data.startIndex + offset
        return try T(deserializing: data[start..<(start + T.size)])
    }

    // MARK: Hex

    /// Lowercase hexadecimal digits of `data`, two per byte, no separators.
    public static func hexString(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(data.count * 2)
        for byte in data {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses hexadecimal digits (either case, an even count, optional spaces); nil on anything else.
    public static func data(hexString: String) -> Data? {
        var data = Data()
        var high: UInt8?
        for scalar in hexString.unicodeScalars where scalar != " " {
            guard let nibble = hexNibble(scalar) else { return nil }
            if let h = high {
                data.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? data : nil
    }

    // MARK: Internal

    /// The value of one hexadecimal digit.
    static func hexNibble(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x30...0x39: return UInt8(scalar.value - 0x30)
        case 0x41...0x46: return UInt8(scalar.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(scalar.value - 0x61 + 10)
        default: return nil
        }
    }

    /// Decodes exactly `count` consecutive elements, reporting length errors against `Owner`.
    static func elements<T: FixedWidthDeserializable, Owner>(
        _ type: T.Type, count: Int, from data: Data, for owner: Owner.Type
    ) throws(SerDeError) -> [T] {
        let total = count * T.size
        guard data.count == total else { throw .wrongLength(Owner.self, expected: total, actual: data.count) }
        var result = [T]()
        result.reserveCapacity(count)
        var start = data.startIndex
        for _ in 0..<count {
            result.append(try T(deserializing: data[start..<(start + T.size)]))
            start += T.size
        }
        return result
    }
}
