// Health Thermometer Service (0x1809): Temperature Measurement (0x2A1C).

import Foundation

extension BLESIGGATT {
    /// Health Thermometer Service, `0x1809`.
    public enum HealthThermometerService: ServiceConfigurable {
        /// `0x1809`.
        public static let uuid = BLEUUID(shortValue: 0x1809)
        /// "Health Thermometer".
        public static let name = "Health Thermometer"
        /// "GATT".
        public static let tag = BLESIGGATT.tag

        /// The service profile with TemperatureMeasurement.
        public static var profile: ConfiguredServiceProfile<HealthThermometerService> {
            ConfiguredServiceProfile(characteristics: [DeserializableCharacteristicProfile<TemperatureMeasurement>()])
        }

        /// Temperature Measurement, `0x2A1C`, indicate: flags (bit 0 Fahrenheit, bit 1 time stamp
        /// present, bit 2 temperature type present), IEEE 11073 FLOAT temperature, then a
        /// ``GATTDateTime`` and a UInt8 type when flagged.
        public struct TemperatureMeasurement: Deserializable, StringDeserializable, CharacteristicConfigurable, Hashable {
            /// `0x2A1C`.
            public static let uuid = BLEUUID(shortValue: 0x2A1C)
            /// "Temperature Measurement".
            public static let name = "Temperature Measurement"
            /// Indicate.
            public static let properties: CharacteristicProperties = [.indicate]
            /// Readable.
            public static let permissions: CharacteristicPermissions = [.readable]

            /// The temperature.
            public var temperature: MedFloat32
            /// True for °F, false for °C.
            public var isFahrenheit: Bool
            /// When the measurement was taken, if sent.
            public var timeStamp: GATTDateTime?
            /// Where it was taken (1 armpit, 2 body, 3 ear, 4 finger, 5 GI tract, 6 mouth,
            /// 7 rectum, 8 toe, 9 tympanum), if sent.
            public var temperatureType: UInt8?

            /// A measurement.
            public init(temperature: MedFloat32, isFahrenheit: Bool = false, timeStamp: GATTDateTime? = nil, temperatureType: UInt8? = nil) {
                self.temperature = temperature
                self.isFahrenheit = isFahrenheit
                self.timeStamp = timeStamp
                self.temperatureType = temperatureType
            }

            /// Variable length: 5, 6, 12 or 13 bytes.
            public static var encodedSize: Int? { nil }

            /// Decodes the flags, then exactly the fields they announce.
            public init(deserializing data: Data) throws(SerDeError) {
                var reader = ByteReader(data, for: TemperatureMeasurement.self)
                let flags: UInt8 = try reader.read()
                temperature = try reader.read()
                isFahrenheit = flags & 0x01 != 0
                timeStamp = flags & 0x02 != 0 ? try reader.read(GATTDateTime.self) : nil
                temperatureType = flags & 0x04 != 0 ? try reader.read(UInt8.self) : nil
                try reader.expectEnd()
            }

            /// The flags byte, then the announced fields.
            public func serialized() -> Data {
                var flags: UInt8 = isFahrenheit ? 0x01 : 0
                if timeStamp != nil { flags |= 0x02 }
                if temperatureType != nil { flags |= 0x04 }
                var data = Data([flags]) + temperature.serialized()
                if let timeStamp { data += timeStamp.serialized() }
                if let temperatureType { data.append(temperatureType) }
                return data
            }

            /// `temperature`, `unit` ("C"/"F"), and `timeStamp` / `temperatureType` when present.
            public var stringValue: [String: String] {
                var strings = ["temperature": "\(temperature.doubleValue)", "unit": isFahrenheit ? "F" : "C"]
                if let timeStamp { strings["timeStamp"] = timeStamp.description }
                if let temperatureType { strings["temperatureType"] = "\(temperatureType)" }
                return strings
            }

            /// Parses `temperature` and `unit` (time stamp and type are not parsed).
            public init?(stringValue: [String: String]) {
                guard let value = stringValue["temperature"].flatMap({ Double($0) }) else { return nil }
                let type = stringValue["temperatureType"].flatMap { UInt8($0) }
                self.init(temperature: MedFloat32(value), isFahrenheit: stringValue["unit"] == "F", temperatureType: type)
            }
        }
    }
}
