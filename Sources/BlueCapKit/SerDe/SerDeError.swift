// SerDeError: why bytes could not be turned into a typed value.

import Foundation

/// The reason a characteristic value could not be decoded.
///
/// Every decoding path in ``SerDe`` reports one of these instead of trapping, so bytes received
/// from a remote device (a `GattCharacteristic1.ReadValue` reply or a `Value` change) are safe to decode.
public enum SerDeError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The byte count did not match the type's encoding. `expected` is the exact count for
    /// fixed-width types, or the minimum count when `atLeast` is true.
    case wrongLength(type: String, expected: Int, actual: Int, atLeast: Bool)
    /// The bytes are not valid UTF-8.
    case invalidUTF8(byteCount: Int)
    /// The raw value decoded but the type rejected it (`init?(rawValue:)` returned nil).
    case invalidRawValue(type: String, rawValue: String)
    /// The bytes have the right length but an inconsistent structure (flags that announce fields
    /// the payload does not hold, a dangling half field, reserved values).
    case malformed(type: String, reason: String)

    /// Builds a ``wrongLength(type:expected:actual:atLeast:)`` naming `T`.
    static func wrongLength<T>(_ type: T.Type, expected: Int, actual: Int, atLeast: Bool = false) -> SerDeError {
        .wrongLength(type: String(describing: type), expected: expected, actual: actual, atLeast: atLeast)
    }

    /// Builds a ``malformed(type:reason:)`` naming `T`.
    static func malformed<T>(_ type: T.Type, _ reason: String) -> SerDeError {
        .malformed(type: String(describing: type), reason: reason)
    }

    /// A one-line explanation naming the type and the byte counts.
    public var description: String {
        switch self {
        case let .wrongLength(type, expected, actual, atLeast):
            let bound = atLeast ? "at least " : ""
            return "\(type): expected \(bound)\(expected) byte\(expected == 1 ? "" : "s"), got \(actual)"
        case let .invalidUTF8(byteCount):
            return "String: \(byteCount) bytes are not valid UTF-8"
        case let .invalidRawValue(type, rawValue):
            return "\(type): raw value \(rawValue) is not a valid case"
        case let .malformed(type, reason):
            return "\(type): \(reason)"
        }
    }
}
