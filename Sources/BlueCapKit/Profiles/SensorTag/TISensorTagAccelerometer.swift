// TI SensorTag accelerometer: data, enable switch, update period.

import Foundation

extension TISensorTag {
    /// The accelerometer service, `F000AA10-0451-4000-B000-000000000000` ("TI Accelerometer").
    public enum AccelerometerService: ServiceConfigurable {
        /// `F000AA10-0451-4000-B000-000000000000`.
        public static let uuid = TISensorTag.uuid(0xAA10)
        /// "TI Accelerometer".
        public static let name = "TI Accelerometer"
        /// "TI Sensor Tag".
        public static let tag = TISensorTag.tag

        /// The service profile with Data, Enabled and UpdatePeriod.
        public static var profile: ConfiguredServiceProfile<AccelerometerService> {
            ConfiguredServiceProfile(characteristics: [
                RawArrayCharacteristicProfile<Data>(),
                RawCharacteristicProfile<Enabled>(),
                RawCharacteristicProfile<UpdatePeriod>(),
            ])
        }

        // MARK: Data

        /// Accelerometer sample, `F000AA11-…`, read + notify: 3 × Int8 raw;
        /// x = −raw₀/64 g, y = −raw₁/64 g, z = raw₂/64 g.
        public struct Data: SensorTagAxes, Hashable {
            /// `F000AA11-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA11)
            /// "Accelerometer Data".
            public static let name = "Accelerometer Data"
            /// At rest, face up: x = 0, y = 0, z = 1 g.
            public static let initialValue: Foundation.Data? = Foundation.Data([0, 0, 64])
            /// Each axis is one signed byte.
            public typealias RawType = Int8

            /// Raw x, y, z.
            public let xRaw: Int8, yRaw: Int8, zRaw: Int8

            /// Wraps raw axes.
            public init(xRaw: Int8, yRaw: Int8, zRaw: Int8) {
                self.xRaw = xRaw
                self.yRaw = yRaw
                self.zRaw = zRaw
            }

            /// The raw sample closest to an acceleration in g (each axis clamped to the Int8 range).
            public init(x: Double, y: Double, z: Double) {
                func raw(_ g: Double) -> Int8 { Int8(min(max((g * 64).rounded(), -128), 127)) }
                self.init(xRaw: raw(-x), yRaw: raw(-y), zRaw: raw(z))
            }

            /// x in g: −raw₀/64.
            public var x: Double { -Double(xRaw) / 64 }
            /// y in g: −raw₁/64.
            public var y: Double { -Double(yRaw) / 64 }
            /// z in g: raw₂/64.
            public var z: Double { Double(zRaw) / 64 }
        }

        // MARK: Enabled

        /// Sensor switch, `F000AA12-…`, read + write: UInt8, 0 = no, 1 = yes (initial 0).
        public enum Enabled: UInt8, SensorTagEnabled {
            /// Off.
            case no = 0
            /// On.
            case yes = 1
            /// `F000AA12-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA12)
            /// "Accelerometer Enabled".
            public static let name = "Accelerometer Enabled"
        }

        // MARK: Update period

        /// Sample period, `F000AA13-…`, read + write: UInt8 raw, period ms = max(10, 10 × raw)
        /// (initial raw 100).
        public struct UpdatePeriod: SensorTagUpdatePeriod, Hashable {
            /// `F000AA13-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA13)
            /// "Accelerometer Update Period".
            public static let name = "Accelerometer Update Period"
            /// The raw byte, in units of 10 ms.
            public let rawValue: UInt8
            /// Wraps a raw byte.
            public init(rawValue: UInt8) { self.rawValue = rawValue }
        }
    }
}
