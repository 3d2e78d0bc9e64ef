// ByteReader: a bounds-checked cursor over received bytes, for variable-length records.

import Foundation

/// Reads fixed-width little-endian fields one after another from a byte buffer, throwing
/// ``SerDeError/wrongLength(type:expected:actual:atLeast:)`` instead of reading past the end.
///
/// Used to decode records whose layout depends on a flags byte, such as the Heart Rate Measurement.
public struct ByteReader: Sendable {
    /// The bytes being read, re-based at index 0.
    public let data: Data
    /// The offset of the next byte to read.
    public private(set) var offset: Int = 0
    /// The type named in length errors.
    private let owner: String

    /// A reader at the start of `data`; errors name `owner`.
    public init<Owner>(_ data: Data, for owner: Owner.Type) {
        self.data = Data(data)
        self.owner = String(describing: owner)
    }

    /// The number of unread bytes.
    public var remaining: Int { data.count - offset }

    /// True when every byte has been read.
    public var isAtEnd: Bool { remaining == 0 }

    /// Reads the next `T`, advancing by `T.size` bytes.
    public mutating func read<T: FixedWidthDeserializable>(_ type: T.Type = T.self) throws(SerDeError) -> T {
        guard remaining >= T.size else {
            throw .wrongLength(type: owner, expected: offset + T.size, actual: data.count, atLeast: true)
        }
        let value = try T(deserializing: data[offset..<(offset + T.size)])
        offset += T.size
        return value
    }

    /// Reads all remaining bytes.
    public mutating func readRemaining() -> Data {
        let rest = data[offset...]
        offset = data.count
        return Data(rest)
    }

    /// Throws unless every byte has been read (the record is longer than its fields).
    public func expectEnd() throws(SerDeError) {
        guard isAtEnd else { throw .wrongLength(type: owner, expected: offset, actual: data.count, atLeast: false) }
    }
}
