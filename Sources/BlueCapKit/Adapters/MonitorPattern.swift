// MonitorPattern: one or-pattern of a passive advertisement monitor (AD type, offset, bytes).
import BlueZ
import Foundation

/// An advertisement pattern for ``CentralManager/startMonitoring(patterns:rssi:capacity:fallbackToActiveScanning:)``:
/// an advertisement matches when one of its AD structures has type ``adType`` and holds
/// ``bytes`` from ``offset`` of its data (an entry of `org.bluez.AdvertisementMonitor1.Patterns`).
///
/// A passive scan only hears the advertising data, never the scan response: bluetoothd puts an
/// advertiser's `LocalName` in the scan response, so a pattern on the local name (AD types 0x08
/// and 0x09) never matches a BlueZ advertiser. Match on manufacturer data, service UUIDs or
/// service data instead.
public struct MonitorPattern: Sendable, Hashable, CustomStringConvertible {
    /// The AD type (0xFF manufacturer data, 0x07 128-bit service UUIDs, 0x16 16-bit service data…).
    public var adType: UInt8
    /// Where the comparison starts in the AD structure's data.
    public var offset: UInt8
    /// The bytes to match (1…31).
    public var bytes: [UInt8]

    /// A pattern on raw AD data.
    public init(adType: UInt8, offset: UInt8 = 0, bytes: [UInt8]) {
        self.adType = adType
        self.offset = offset
        self.bytes = bytes
    }

    /// Manufacturer specific data (AD type 0xFF) from `companyID` whose payload starts with `prefix`.
    public static func manufacturerData(companyID: UInt16, prefix: [UInt8] = []) -> MonitorPattern {
        MonitorPattern(adType: 0xFF, bytes: [UInt8(companyID & 0xFF), UInt8(companyID >> 8)] + prefix)
    }

    /// A 128-bit service UUID in the complete list (AD type 0x07; the advertiser lists it first).
    public static func serviceUUID(_ uuid: BLEUUID) -> MonitorPattern {
        MonitorPattern(adType: 0x07, bytes: uuid.bigEndianBytes.reversed())
    }

    /// Parses `TYPE:HEX` or `TYPE:OFFSET:HEX` with TYPE and OFFSET in hex or decimal
    /// (`ff:ffff01` is manufacturer data of company 0xFFFF starting with 0x01).
    public init?(parsing text: String) {
        let parts = text.split(separator: ":").map(String.init)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        func number(_ s: String) -> UInt8? { UInt8(s.hasPrefix("0x") ? String(s.dropFirst(2)) : s, radix: 16) }
        guard let type = number(parts[0]) else { return nil }
        let offset = parts.count == 3 ? number(parts[1]) : 0
        let hex = parts.last!
        guard let offset, hex.count % 2 == 0, !hex.isEmpty, hex.count <= 62 else { return nil }
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            guard let b = UInt8(hex[i..<j], radix: 16) else { return nil }
            bytes.append(b)
            i = j
        }
        self.init(adType: type, offset: offset, bytes: bytes)
    }

    var bluez: AdvertisementPattern { AdvertisementPattern(startPosition: offset, adType: adType, content: bytes) }

    public var description: String { bluez.description }
}
