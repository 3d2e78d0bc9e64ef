// AdvertisementMonitor: one org.bluez.AdvertisementMonitor1 object of type "or_patterns", as
// exported by a monitoring application (see AdvertisementMonitorApplication).

import DBus
import Foundation

// MARK: - AdvertisementPattern

/// One entry of `Patterns` (`a(yyay)`): the advertisement matches when an AD structure of type
/// ``adType`` holds ``content`` starting at byte ``startPosition`` of its data.
public struct AdvertisementPattern: Sendable, Hashable, CustomStringConvertible {
    /// Where the comparison starts inside the AD structure's data (0: its first byte).
    public var startPosition: UInt8
    /// The AD type (assigned numbers, e.g. 0xFF manufacturer specific data, 0x07 complete list
    /// of 128-bit service UUIDs, 0x16 service data).
    public var adType: UInt8
    /// The bytes to find (1 to 31).
    public var content: [UInt8]

    /// A pattern.
    public init(startPosition: UInt8 = 0, adType: UInt8, content: [UInt8]) {
        self.startPosition = startPosition
        self.adType = adType
        self.content = content
    }

    /// The `(yyay)` struct.
    public var dbusValue: DBusValue {
        .struct([.byte(startPosition), .byte(adType), .array(element: .byte, content.map(DBusValue.byte))])
    }

    /// Decodes a `(yyay)` struct; nil when it has another shape.
    public init?(dbusValue: DBusValue) {
        guard case .struct(let fields) = dbusValue.unwrapped, fields.count == 3,
              case .byte(let start) = fields[0], case .byte(let type) = fields[1],
              case .array(_, let bytes) = fields[2] else { return nil }
        var content: [UInt8] = []
        for b in bytes { guard case .byte(let v) = b else { return nil }; content.append(v) }
        self.init(startPosition: start, adType: type, content: content)
    }

    /// Whether the AD structure `(type, data)` matches.
    public func matches(type: UInt8, data: [UInt8]) -> Bool {
        guard type == adType, !content.isEmpty else { return false }
        let start = Int(startPosition)
        guard start + content.count <= data.count else { return false }
        return Array(data[start..<start + content.count]) == content
    }

    public var description: String {
        "\(startPosition):0x\(String(adType, radix: 16)):" + content.map { String(format: "%02x", $0) }.joined()
    }
}

// MARK: - AdvertisementMonitor

/// What an `org.bluez.AdvertisementMonitor1` object of `Type` `"or_patterns"` asks for: any of
/// ``patterns``, with optional RSSI thresholds and timeouts.
///
/// BlueZ takes the four RSSI values all or none: without them `DeviceFound` is called on every
/// matching advertisement and `DeviceLost` never; with them a device is found after its signal
/// stayed above ``rssiHighThreshold`` for ``rssiHighTimeout`` seconds and lost after
/// ``rssiLowTimeout`` seconds below ``rssiLowThreshold`` or without any advertisement.
public struct AdvertisementMonitor: Sendable, Equatable {
    /// `Type`: always `"or_patterns"` (the only type BlueZ 5.66 supports).
    public static let type = "or_patterns"
    /// `org.bluez.AdvertisementMonitor1`.
    public static let interface = "org.bluez.AdvertisementMonitor1"

    /// `Patterns` (at least one).
    public var patterns: [AdvertisementPattern]
    /// `RSSILowThreshold` in dBm (-127...20).
    public var rssiLowThreshold: Int16?
    /// `RSSIHighThreshold` in dBm (-127...20), above the low threshold.
    public var rssiHighThreshold: Int16?
    /// `RSSILowTimeout` in seconds (1...300).
    public var rssiLowTimeout: UInt16?
    /// `RSSIHighTimeout` in seconds (1...300).
    public var rssiHighTimeout: UInt16?
    /// `RSSISamplingPeriod`: 0 every packet, 255 only the first, N: one per N × 100 ms (kernel only).
    public var rssiSamplingPeriod: UInt16?

    /// A monitor.
    public init(patterns: [AdvertisementPattern], rssiLowThreshold: Int16? = nil, rssiHighThreshold: Int16? = nil,
                rssiLowTimeout: UInt16? = nil, rssiHighTimeout: UInt16? = nil, rssiSamplingPeriod: UInt16? = nil) {
        self.patterns = patterns
        self.rssiLowThreshold = rssiLowThreshold
        self.rssiHighThreshold = rssiHighThreshold
        self.rssiLowTimeout = rssiLowTimeout
        self.rssiHighTimeout = rssiHighTimeout
        self.rssiSamplingPeriod = rssiSamplingPeriod
    }

    /// The exported properties (optional ones only when set).
    var properties: [DBusProperty] {
        var p = [
            DBusProperty("Type", type: .string, value: .string(Self.type)),
            DBusProperty("Patterns", type: .array(.struct([.byte, .byte, .array(.byte)])),
                         value: .array(element: .struct([.byte, .byte, .array(.byte)]), patterns.map(\.dbusValue))),
        ]
        if let rssiLowThreshold { p.append(DBusProperty("RSSILowThreshold", type: .int16, value: .int16(rssiLowThreshold))) }
        if let rssiHighThreshold { p.append(DBusProperty("RSSIHighThreshold", type: .int16, value: .int16(rssiHighThreshold))) }
        if let rssiLowTimeout { p.append(DBusProperty("RSSILowTimeout", type: .uint16, value: .uint16(rssiLowTimeout))) }
        if let rssiHighTimeout { p.append(DBusProperty("RSSIHighTimeout", type: .uint16, value: .uint16(rssiHighTimeout))) }
        if let rssiSamplingPeriod { p.append(DBusProperty("RSSISamplingPeriod", type: .uint16, value: .uint16(rssiSamplingPeriod))) }
        return p
    }

    /// The interface, with `Release`, `Activate`, `DeviceFound(o)` and `DeviceLost(o)` reported to `events`.
    func dbusInterface(events: @escaping @Sendable (AdvertisementMonitorEvent) -> Void) -> DBusInterface {
        func method(_ name: String, input: DBusSignature = .empty, _ event: @escaping @Sendable (MethodCall) -> AdvertisementMonitorEvent?) -> DBusMethod {
            DBusMethod(name, input: input) { call, responder in
                responder.succeed()
                if let e = event(call) { events(e) }
            }
        }
        @Sendable func device(_ call: MethodCall) -> ObjectPath? {
            if case .objectPath(let p)? = call.body.first { return p }
            return nil
        }
        return DBusInterface(name: Self.interface, methods: [
            method("Release") { _ in .release },
            method("Activate") { _ in .activate },
            method("DeviceFound", input: "o") { device($0).map(AdvertisementMonitorEvent.deviceFound) },
            method("DeviceLost", input: "o") { device($0).map(AdvertisementMonitorEvent.deviceLost) },
        ], properties: properties)
    }
}

// MARK: - AdvertisementMonitorEvent

/// A call bluetoothd made on an exported monitor.
public enum AdvertisementMonitorEvent: Sendable, Equatable {
    /// `Activate()`: the monitor runs; `DeviceFound`/`DeviceLost` may follow.
    case activate
    /// `Release()`: the monitor was refused or deactivated.
    case release
    /// `DeviceFound(o)`: a matching device, by its `Device1` path.
    case deviceFound(ObjectPath)
    /// `DeviceLost(o)`: a found device went out of range.
    case deviceLost(ObjectPath)
}
