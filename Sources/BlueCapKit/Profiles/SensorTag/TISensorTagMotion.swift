// TI SensorTag magnetometer and gyroscope.

import Foundation

extension TISensorTag {
    // MARK: - Magnetometer

    /// The magnetometer service, `F000AA30-…` ("TI Magnetometer").
    public enum MagnetometerService: ServiceConfigurable {
        /// `F000AA30-0451-4000-B000-000000000000`.
        public static let uuid = TISensorTag.uuid(0xAA30)
        /// "TI Magnetometer".
        public static let name = "TI Magnetometer"
        /// "TI Sensor Tag".
        public static let tag = TISensorTag.tag

        /// The service profile with Data, Enabled and UpdatePeriod.
        public static var profile: ConfiguredServiceProfile<MagnetometerService> {
            ConfiguredServiceProfile(characteristics: [
                RawArrayCharacteristicProfile<Data>(),
                RawCharacteristicProfile<Enabled>(),
                RawCharacteristicProfile<UpdatePeriod>(),
            ])
        }

        /// Field sample, `F000AA31-…`, read + notify: 3 × Int16 little-endian, ±1000 µT full scale;
        /// x = −raw₀ × 2000/65536 µT, y = −raw₁ × 2000/65536 µT, z = raw₂ × 2000/65536 µT
        /// (x and y negated to match the accelerometer's axes).
        public struct Data: SensorTagAxes, Hashable {
            /// `F000AA31-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA31)
            /// "Magnetometer Data".
            public static let name = "Magnetometer Data"
            /// Each axis is a signed 16-bit integer.
            public typealias RawType = Int16
            /// Raw x, y, z.
            public let xRaw: Int16, yRaw: Int16, zRaw: Int16
            /// Wraps raw axes.
            public init(xRaw: Int16, yRaw: Int16, zRaw: Int16) {
                self.xRaw = xRaw
                self.yRaw = yRaw
                self.zRaw = zRaw
            }
            /// µT per raw unit.
            public static let scale = 2000.0 / 65536.0
            /// x in µT.
            public var x: Double { -Double(xRaw) * Self.scale }
            /// y in µT.
            public var y: Double { -Double(yRaw) * Self.scale }
            /// z in µT.
            public var z: Double { Double(zRaw) * Self.scale }
        }

        /// Sensor switch, `F000AA32-…`: 0 = off, 1 = on.
        public enum Enabled: UInt8, SensorTagEnabled {
            /// Off.
            case no = 0
            /// On.
            case yes = 1
            /// `F000AA32-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA32)
            /// "Magnetometer Enabled".
            public static let name = "Magnetometer Enabled"
        }

        /// Sample period, `F000AA33-…`: units of 10 ms.
        public struct UpdatePeriod: SensorTagUpdatePeriod, Hashable {
            /// `F000AA33-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA33)
            /// "Magnetometer Update Period".
            public static let name = "Magnetometer Update Period"
            /// The raw byte, in units of 10 ms.
            public let rawValue: UInt8
            /// Wraps a raw byte.
            public init(rawValue: UInt8) { self.rawValue = rawValue }
        }
    }

    // MARK: - Gyroscope

    /// The gyroscope service, `F000AA50-…` ("TI Gyroscope").
    public enum GyroscopeService: ServiceConfigurable {
        /// `F000AA50-0451-4000-B000-000000000000`.
        public static let uuid = TISensorTag.uuid(0xAA50)
        /// "TI Gyroscope".
        public static let name = "TI Gyroscope"
        /// "TI Sensor Tag".
        public static let tag = TISensorTag.tag

        /// The service profile with Data and Enabled.
        public static var profile: ConfiguredServiceProfile<GyroscopeService> {
            ConfiguredServiceProfile(characteristics: [
                RawArrayCharacteristicProfile<Data>(),
                RawCharacteristicProfile<Enabled>(),
            ])
        }

        /// Rotation sample, `F000AA51-…`, read + notify: 3 × Int16 little-endian in wire order,
        /// ±250 °/s full scale; each axis = raw × 500/65536 °/s.
        public struct Data: SensorTagAxes, Hashable {
            /// `F000AA51-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA51)
            /// "Gyroscope Data".
            public static let name = "Gyroscope Data"
            /// Each axis is a signed 16-bit integer.
            public typealias RawType = Int16
            /// Raw axes in wire order.
            public let xRaw: Int16, yRaw: Int16, zRaw: Int16
            /// Wraps raw axes.
            public init(xRaw: Int16, yRaw: Int16, zRaw: Int16) {
                self.xRaw = xRaw
                self.yRaw = yRaw
                self.zRaw = zRaw
            }
            /// °/s per raw unit.
            public static let scale = 500.0 / 65536.0
            /// First axis in °/s.
            public var x: Double { Double(xRaw) * Self.scale }
            /// Second axis in °/s.
            public var y: Double { Double(yRaw) * Self.scale }
            /// Third axis in °/s.
            public var z: Double { Double(zRaw) * Self.scale }
        }

        /// Axis switch, `F000AA52-…`, read + write: a bit mask, bit 0 x, bit 1 y, bit 2 z (initial 0).
        public struct Enabled: RawDeserializable, StringDeserializable, CharacteristicConfigurable, OptionSet, Hashable {
            /// `F000AA52-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA52)
            /// "Gyroscope Enabled".
            public static let name = "Gyroscope Enabled"
            /// All off.
            public static let initialValue: Foundation.Data? = Foundation.Data([0])
            /// The axis bits.
            public let rawValue: UInt8
            /// Wraps axis bits.
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            /// The x axis.
            public static let x = Enabled(rawValue: 1)
            /// The y axis.
            public static let y = Enabled(rawValue: 2)
            /// The z axis.
            public static let z = Enabled(rawValue: 4)
            /// All three axes (`0x07`).
            public static let all: Enabled = [.x, .y, .z]
            /// `["x": "Yes"|"No", "y": …, "z": …]`.
            public var stringValue: [String: String] {
                ["x": contains(.x) ? "Yes" : "No", "y": contains(.y) ? "Yes" : "No", "z": contains(.z) ? "Yes" : "No"]
            }
            /// Parses the `"x"`, `"y"`, `"z"` switches (missing keys are off).
            public init?(stringValue: [String: String]) {
                var axes: Enabled = []
                for (key, axis) in [("x", Enabled.x), ("y", .y), ("z", .z)] {
                    switch stringValue[key] {
                    case "Yes": axes.insert(axis)
                    case "No", nil: break
                    default: return nil
                    }
                }
                self = axes
            }
        }
    }
}
