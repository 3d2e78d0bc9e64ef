// AdvertisingFlags: the Flags AD structure (type 0x01) of an advertisement.

// MARK: - AdvertisingFlags

/// The bits of an advertisement's Flags AD structure (AD type 0x01, Core Specification
/// Supplement part A §1.3), as BlueZ reports them in `org.bluez.Device1.AdvertisingFlags`.
///
/// ```swift
/// if let flags = peripheral.advertisement.flags, flags.contains(.leGeneralDiscoverable) { … }
/// ```
public struct AdvertisingFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The flags byte as advertised.
    public let rawValue: UInt8

    /// Flags from the advertised byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// LE Limited Discoverable Mode (bit 0).
    public static let leLimitedDiscoverable = AdvertisingFlags(rawValue: 1 << 0)
    /// LE General Discoverable Mode (bit 1).
    public static let leGeneralDiscoverable = AdvertisingFlags(rawValue: 1 << 1)
    /// BR/EDR Not Supported (bit 2): an LE-only device.
    public static let brEdrNotSupported = AdvertisingFlags(rawValue: 1 << 2)
    /// Simultaneous LE and BR/EDR to the same device capable (controller) (bit 3).
    public static let simultaneousLEAndBrEdrController = AdvertisingFlags(rawValue: 1 << 3)
    /// Simultaneous LE and BR/EDR to the same device capable (host) (bit 4; previously used).
    public static let simultaneousLEAndBrEdrHost = AdvertisingFlags(rawValue: 1 << 4)

    /// The set bits by name, e.g. `[leGeneralDiscoverable, brEdrNotSupported]`, and any
    /// reserved bits as hex.
    public var description: String {
        let names: [(AdvertisingFlags, String)] = [
            (.leLimitedDiscoverable, "leLimitedDiscoverable"), (.leGeneralDiscoverable, "leGeneralDiscoverable"),
            (.brEdrNotSupported, "brEdrNotSupported"), (.simultaneousLEAndBrEdrController, "simultaneousLEAndBrEdrController"),
            (.simultaneousLEAndBrEdrHost, "simultaneousLEAndBrEdrHost"),
        ]
        var parts = names.filter { contains($0.0) }.map(\.1)
        let reserved = rawValue & 0xE0
        if reserved != 0 { parts.append("reserved 0x" + String(reserved, radix: 16, uppercase: true)) }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
