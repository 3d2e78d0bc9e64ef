// Heart Rate Service (0x180D): measurement, body sensor location, control point.

import Foundation

extension BLESIGGATT {
    /// Heart Rate Service, `0x180D`.
    public enum HeartRateService: ServiceConfigurable {
        /// `0x180D`.
        public static let uuid = BLEUUID(shortValue: 0x180D)
        /// "Heart Rate".
        public static let name = "Heart Rate"
        /// "GATT".
        public static let tag = BLESIGGATT.tag

        /// The service profile with Measurement, BodySensorLocation and ControlPoint.
        public static var profile: ConfiguredServiceProfile<HeartRateService> {
            ConfiguredServiceProfile(characteristics: [
                DeserializableCharacteristicProfile<Measurement>(),
                RawCharacteristicProfile<BodySensorLocation>(),
                RawCharacteristicProfile<ControlPoint>(),
            ])
        }

        // MARK: Body sensor location

        /// Body Sensor Location, `0x2A38`, read: UInt8.
        public enum BodySensorLocation: UInt8, RawDeserializable, StringDeserializable, CharacteristicConfigurable, CaseIterable {
            /// Other.
            case other = 0
            /// Chest.
            case chest = 1
            /// Wrist.
            case wrist = 2
            /// Finger.
            case finger = 3
            /// Hand.
            case hand = 4
            /// Ear lobe.
            case earLobe = 5
            /// Foot.
            case foot = 6

            /// `0x2A38`.
            public static let uuid = BLEUUID(shortValue: 0x2A38)
            /// "Body Sensor Location".
            public static let name = "Body Sensor Location"
            /// Read.
            public static let properties: CharacteristicProperties = [.read]
            /// Readable.
            public static let permissions: CharacteristicPermissions = [.readable]

            /// The case names.
            public static var stringValues: [String] { allCases.map { "\($0)" } }
            /// `[name: case name]`.
            public var stringValue: [String: String] { [Self.name: "\(self)"] }
            /// Parses `[name: case name]`.
            public init?(stringValue: [String: String]) {
                guard let match = Self.allCases.first(where: { "\($0)" == stringValue[Self.name] }) else { return nil }
                self = match
            }
        }

        // MARK: Control point

        /// Heart Rate Control Point, `0x2A39`, write: UInt8 command.
        public enum ControlPoint: UInt8, RawDeserializable, StringDeserializable, CharacteristicConfigurable {
            /// Resets the Energy Expended field to 0.
            case resetEnergyExpended = 1

            /// `0x2A39`.
            public static let uuid = BLEUUID(shortValue: 0x2A39)
            /// "Heart Rate Control Point".
            public static let name = "Heart Rate Control Point"
            /// Write.
            public static let properties: CharacteristicProperties = [.write]
            /// Writeable.
            public static let permissions: CharacteristicPermissions = [.writeable]

            /// `["resetEnergyExpended"]`.
            public static var stringValues: [String] { ["resetEnergyExpended"] }
            /// `[name: "resetEnergyExpended"]`.
            public var stringValue: [String: String] { [Self.name: "resetEnergyExpended"] }
            /// Parses `[name: "resetEnergyExpended"]`.
            public init?(stringValue: [String: String]) {
                guard stringValue[Self.name] == "resetEnergyExpended" else { return nil }
                self = .resetEnergyExpended
            }
        }
    }
}
