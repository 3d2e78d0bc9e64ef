// BLEUUID: a Bluetooth UUID, written short ("2A19") or long, stored as 128 bits.

import Foundation

/// A Bluetooth attribute UUID.
///
/// Parses the forms users write — 16-bit (`"2A19"`, `"0x2a19"`), 32-bit (`"0000180F"`) and 128-bit
/// (`"F000AA11-0451-4000-B000-000000000000"`, with or without dashes) in any case — and expands short
/// forms with the Bluetooth base UUID `0000xxxx-0000-1000-8000-00805f9b34fb`. ``uuidString`` is the
/// lowercase 128-bit form BlueZ uses in `UUID` / `UUIDs` properties and `SetDiscoveryFilter`.
public struct BLEUUID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    // MARK: Storage

    /// The first 8 bytes, big-endian (as written).
    public let high: UInt64
    /// The last 8 bytes, big-endian (as written).
    public let low: UInt64

    /// The low 64 bits of the Bluetooth base UUID.
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The bits of the base UUID in the high half, outside the 32-bit alias field.
    static let baseHigh: UInt64 = 0x0000_1000

    // MARK: Initializers

    /// The UUID with the given 128 bits.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The 128-bit UUID for a 16-bit SIG-assigned number (`0x2A19` → `00002a19-0000-1000-8000-00805f9b34fb`).
    public init(shortValue: UInt16) { self.init(value32: UInt32(shortValue)) }

    /// The 128-bit UUID for a 32-bit SIG alias.
    public init(value32: UInt32) {
        self.init(high: UInt64(value32) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// The same 128 bits as a Foundation `UUID`.
    public init(_ uuid: UUID) {
        let b = uuid.uuid
        let bytes = [b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8, b.9, b.10, b.11, b.12, b.13, b.14, b.15]
        self.init(bigEndianBytes: bytes[...])
    }

    /// Parses a 16-, 32- or 128-bit UUID string; nil on anything else.
    public init?(string: String) {
        guard let parsed = try? BLEUUID(parsing: string) else { return nil }
        self = parsed
    }

    /// Parses a 16-, 32- or 128-bit UUID string, throwing ``BLEUUIDError`` on anything else.
    public init(parsing string: String) throws(BLEUUIDError) {
        var text = Substring(string.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = text.dropFirst(2) }
        var nibbles = [UInt8]()
        nibbles.reserveCapacity(32)
        for (index, scalar) in text.unicodeScalars.enumerated() {
            if scalar == "-" {
                guard text.count == 36, [8, 13, 18, 23].contains(index) else { throw .invalid(string) }
                continue
            }
            guard let nibble = SerDe.hexNibble(scalar) else { throw .invalid(string) }
            nibbles.append(nibble)
        }
        if text.count == 36 && nibbles.count != 32 { throw .invalid(string) }
        switch nibbles.count {
        case 4, 8:
            let value = nibbles.reduce(UInt32(0)) { $0 << 4 | UInt32($1) }
            self.init(value32: value)
        case 32:
            let high = nibbles[0..<16].reduce(UInt64(0)) { $0 << 4 | UInt64($1) }
            let low = nibbles[16..<32].reduce(UInt64(0)) { $0 << 4 | UInt64($1) }
            self.init(high: high, low: low)
        default:
            throw .invalid(string)
        }
    }

    /// Parses a string literal; a malformed literal is a programming error and stops the program.
    public init(stringLiteral value: String) {
        do {
            try self.init(parsing: value)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// The UUID from 16 bytes in big-endian (written) order; nil for any other count.
    public init?(bigEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let array = Array(bytes)
        self.init(bigEndianBytes: array[...])
    }

    private init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        let start = bytes.startIndex
        let high = bytes[start..<(start + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[(start + 8)..<(start + 16)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(high: high, low: low)
    }

    // MARK: Representations

    /// The canonical lowercase 128-bit form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as BlueZ writes it.
    public var uuidString: String {
        let hex = SerDe.hexString(Data(bigEndianBytes))
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-"
            + String(c[16..<20]) + "-" + String(c[20..<32])
    }

    /// The 16 bytes in big-endian (written) order, as in an iBeacon proximity UUID.
    public var bigEndianBytes: [UInt8] {
        (0..<16).map { i in UInt8(truncatingIfNeeded: (i < 8 ? high : low) >> (8 * (7 - i % 8))) }
    }

    /// The 32-bit alias when the UUID lies in the Bluetooth base range, nil otherwise.
    public var value32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(high >> 32)
    }

    /// The 16-bit SIG number when the UUID is a 16-bit alias of the base UUID, nil otherwise.
    public var shortValue: UInt16? {
        guard let value = value32, value <= 0xFFFF else { return nil }
        return UInt16(value)
    }

    /// The short uppercase form (`"2A19"`, or 8 digits for a 32-bit alias) when the UUID is in the
    /// Bluetooth base range, nil otherwise.
    public var shortString: String? {
        guard let value = value32 else { return nil }
        let digits = value <= 0xFFFF ? 4 : 8
        let hex = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: digits - hex.count) + hex
    }

    /// The same 128 bits as a Foundation `UUID`.
    public var uuid: UUID {
        let b = bigEndianBytes
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// ``shortString`` when there is one, ``uuidString`` otherwise.
    public var description: String { shortString ?? uuidString }

    /// Orders by the 128-bit value.
    public static func < (lhs: BLEUUID, rhs: BLEUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

/// Why a string is not a Bluetooth UUID.
public enum BLEUUIDError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The string is not 4, 8 or 32 hexadecimal digits (the last optionally dashed 8-4-4-4-12).
    case invalid(String)

    /// Names the rejected string.
    public var description: String {
        switch self {
        case let .invalid(text):
            return "not a Bluetooth UUID: \"\(text)\" (expected 4, 8 or 32 hex digits, e.g. \"2A19\")"
        }
    }
}
