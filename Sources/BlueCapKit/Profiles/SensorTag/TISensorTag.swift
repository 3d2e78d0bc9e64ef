// TISensorTag: the TI CC2541 SensorTag's GATT services, and the shapes they share.

import Foundation

/// Profiles of the TI CC2541 SensorTag. Every service and characteristic UUID is
/// `F000xxxx-0451-4000-B000-000000000000`.
public enum TISensorTag {
    /// The tag used by every SensorTag service profile.
    public static let tag = "TI Sensor Tag"

    /// The 128-bit SensorTag UUID for a 16-bit number (`0xAA10` → `f000aa10-0451-4000-b000-000000000000`).
    public static func uuid(_ short: UInt16) -> BLEUUID {
        BLEUUID(high: 0xF000_0000_0451_4000 | UInt64(short) << 32, low: 0xB000_0000_0000_0000)
    }

    /// Every SensorTag service profile defined here.
    public static var serviceProfiles: [ServiceProfile] {
        [
            AccelerometerService.profile.serviceProfile,
            MagnetometerService.profile.serviceProfile,
            GyroscopeService.profile.serviceProfile,
            TemperatureService.profile.serviceProfile,
            HumidityService.profile.serviceProfile,
        ]
    }
}

// MARK: - Shared characteristic shapes

/// A SensorTag configuration characteristic switching a sensor off (0) and on (1).
/// Conforming enums get their string form (`[name: "No" | "Yes"]`) for free.
public protocol SensorTagEnabled: RawDeserializable, StringDeserializable, CharacteristicConfigurable, CaseIterable
where RawValue == UInt8 {
    /// The switched-off case.
    static var no: Self { get }
    /// The switched-on case.
    static var yes: Self { get }
}

extension SensorTagEnabled {
    /// Read and write.
    public static var properties: CharacteristicProperties { [.read, .write] }
    /// Readable and writeable.
    public static var permissions: CharacteristicPermissions { [.readable, .writeable] }
    /// Off (`0x00`).
    public static var initialValue: Data? { Data([0]) }
    /// `["No", "Yes"]`.
    public static var stringValues: [String] { ["No", "Yes"] }
    /// `[name: "No" | "Yes"]`.
    public var stringValue: [String: String] { [Self.name: self == Self.yes ? "Yes" : "No"] }
    /// Parses `[name: "No" | "Yes"]`.
    public init?(stringValue: [String: String]) {
        switch stringValue[Self.name] {
        case "Yes": self = Self.yes
        case "No": self = Self.no
        default: return nil
        }
    }
}

/// A SensorTag period characteristic: one byte in units of 10 ms, never faster than 10 ms
/// (period ms = max(10, 10 × raw)). Initial raw value 100 (1 s).
public protocol SensorTagUpdatePeriod: RawDeserializable, StringDeserializable, CharacteristicConfigurable
where RawValue == UInt8 {
    /// Wraps a raw byte (every byte is valid).
    init(rawValue: UInt8)
}

extension SensorTagUpdatePeriod {
    /// The period in milliseconds: max(10, 10 × raw).
    public var period: Int { max(10, 10 * Int(rawValue)) }

    /// The raw byte closest to `milliseconds`, clamped to 10…2550 ms.
    public init(milliseconds: Int) {
        let raw = (min(max(milliseconds, 10), 2550) + 5) / 10
        self.init(rawValue: UInt8(raw))
    }

    /// Read and write.
    public static var properties: CharacteristicProperties { [.read, .write] }
    /// Readable and writeable.
    public static var permissions: CharacteristicPermissions { [.readable, .writeable] }
    /// Raw 100 (1000 ms).
    public static var initialValue: Data? { Data([100]) }
    /// `["period": ms, "periodRaw": raw]`.
    public var stringValue: [String: String] { ["period": "\(period)", "periodRaw": "\(rawValue)"] }
    /// Parses `"periodRaw"`, or else `"period"` in milliseconds.
    public init?(stringValue: [String: String]) {
        if let raw = stringValue["periodRaw"].flatMap({ UInt8($0) }) {
            self.init(rawValue: raw)
        } else if let ms = stringValue["period"].flatMap({ Int($0) }) {
            self.init(milliseconds: ms)
        } else {
            return nil
        }
    }
}

/// Three signed axes in wire order, shared by the motion sensors' data characteristics.
public protocol SensorTagAxes: RawArrayDeserializable, StringDeserializable, CharacteristicConfigurable
where RawType: BinaryInteger & LosslessStringConvertible {
    /// Builds the value from its three raw axes.
    init(xRaw: RawType, yRaw: RawType, zRaw: RawType)
    /// The raw axes in wire order.
    var xRaw: RawType { get }
    /// The raw axes in wire order.
    var yRaw: RawType { get }
    /// The raw axes in wire order.
    var zRaw: RawType { get }
    /// The converted axes, in the sensor's unit.
    var x: Double { get }
    /// The converted axes, in the sensor's unit.
    var y: Double { get }
    /// The converted axes, in the sensor's unit.
    var z: Double { get }
}

extension SensorTagAxes {
    /// 3 axes.
    public static var size: Int { 3 }
    /// `[xRaw, yRaw, zRaw]`.
    public var rawValue: [RawType] { [xRaw, yRaw, zRaw] }
    /// Exactly three axes.
    public init?(rawValue: [RawType]) {
        guard rawValue.count == 3 else { return nil }
        self.init(xRaw: rawValue[0], yRaw: rawValue[1], zRaw: rawValue[2])
    }
    /// Read and notify.
    public static var properties: CharacteristicProperties { [.read, .notify] }
    /// Readable.
    public static var permissions: CharacteristicPermissions { [.readable] }
    /// Converted and raw axes: `x`, `y`, `z`, `xRaw`, `yRaw`, `zRaw`.
    public var stringValue: [String: String] {
        ["x": "\(x)", "y": "\(y)", "z": "\(z)", "xRaw": "\(xRaw)", "yRaw": "\(yRaw)", "zRaw": "\(zRaw)"]
    }
    /// Parses `xRaw`, `yRaw` and `zRaw`.
    public init?(stringValue: [String: String]) {
        guard let x = stringValue["xRaw"].flatMap(RawType.init), let y = stringValue["yRaw"].flatMap(RawType.init),
              let z = stringValue["zRaw"].flatMap(RawType.init) else { return nil }
        self.init(xRaw: x, yRaw: y, zRaw: z)
    }
}
