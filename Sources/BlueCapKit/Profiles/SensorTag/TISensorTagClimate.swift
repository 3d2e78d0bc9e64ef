// TI SensorTag IR temperature and humidity.

import Foundation

extension TISensorTag {
    // MARK: - IR temperature

    /// The IR temperature service (TMP006), `F000AA00-…` ("TI IR Temperature").
    public enum TemperatureService: ServiceConfigurable {
        /// `F000AA00-0451-4000-B000-000000000000`.
        public static let uuid = TISensorTag.uuid(0xAA00)
        /// "TI IR Temperature".
        public static let name = "TI IR Temperature"
        /// "TI Sensor Tag".
        public static let tag = TISensorTag.tag

        /// The service profile with Data and Enabled.
        public static var profile: ConfiguredServiceProfile<TemperatureService> {
            ConfiguredServiceProfile(characteristics: [
                RawPairCharacteristicProfile<Data>(),
                RawCharacteristicProfile<Enabled>(),
            ])
        }

        /// Temperature sample, `F000AA01-…`, read + notify: object voltage raw (Int16 LE) then
        /// ambient raw (Int16 LE). Ambient °C = raw / 128; object °C from the TMP006 model.
        public struct Data: RawPairDeserializable, StringDeserializable, CharacteristicConfigurable, Hashable {
            /// `F000AA01-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA01)
            /// "Temperature Data".
            public static let name = "Temperature Data"
            /// Read and notify.
            public static let properties: CharacteristicProperties = [.read, .notify]
            /// Readable.
            public static let permissions: CharacteristicPermissions = [.readable]

            /// Object (thermopile) voltage, raw.
            public let rawValue1: Int16
            /// Ambient (die) temperature, raw.
            public let rawValue2: Int16

            /// Wraps the raw pair.
            public init(rawValue1: Int16, rawValue2: Int16) {
                self.rawValue1 = rawValue1
                self.rawValue2 = rawValue2
            }

            /// Ambient temperature in °C: raw / 128.
            public var ambientTemperature: Double { Double(rawValue2) / 128 }

            /// Object temperature in °C, from the TMP006 thermopile model.
            public var objectTemperature: Double {
                let vObj = Double(rawValue1) * 0.00000015625
                let tDie = ambientTemperature + 273.15
                let dT = tDie - 298.15
                let s = 6.4e-14 * (1 + 1.75e-3 * dT - 1.678e-5 * dT * dT)
                let vOs = -2.94e-5 - 5.7e-7 * dT + 4.63e-9 * dT * dT
                let f = (vObj - vOs) + 13.4 * (vObj - vOs) * (vObj - vOs)
                return pow(pow(tDie, 4) + f / s, 0.25) - 273.15
            }

            /// `object`, `ambient` in °C and the raw values.
            public var stringValue: [String: String] {
                ["object": "\(objectTemperature)", "ambient": "\(ambientTemperature)",
                 "objectRaw": "\(rawValue1)", "ambientRaw": "\(rawValue2)"]
            }

            /// Parses `objectRaw` and `ambientRaw`.
            public init?(stringValue: [String: String]) {
                guard let object = stringValue["objectRaw"].flatMap({ Int16($0) }),
                      let ambient = stringValue["ambientRaw"].flatMap({ Int16($0) }) else { return nil }
                self.init(rawValue1: object, rawValue2: ambient)
            }
        }

        /// Sensor switch, `F000AA02-…`: 0 = off, 1 = on.
        public enum Enabled: UInt8, SensorTagEnabled {
            /// Off.
            case no = 0
            /// On.
            case yes = 1
            /// `F000AA02-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA02)
            /// "Temperature Enabled".
            public static let name = "Temperature Enabled"
        }
    }

    // MARK: - Humidity

    /// The humidity service (SHT21), `F000AA20-…` ("TI Humidity").
    public enum HumidityService: ServiceConfigurable {
        /// `F000AA20-0451-4000-B000-000000000000`.
        public static let uuid = TISensorTag.uuid(0xAA20)
        /// "TI Humidity".
        public static let name = "TI Humidity"
        /// "TI Sensor Tag".
        public static let tag = TISensorTag.tag

        /// The service profile with Data and Enabled.
        public static var profile: ConfiguredServiceProfile<HumidityService> {
            ConfiguredServiceProfile(characteristics: [
                RawPairCharacteristicProfile<Data>(),
                RawCharacteristicProfile<Enabled>(),
            ])
        }

        /// Humidity sample, `F000AA21-…`, read + notify: temperature raw (UInt16 LE) then humidity
        /// raw (UInt16 LE). °C = −46.85 + 175.72 × raw/65536; %RH = −6 + 125 × (raw with the two
        /// status bits cleared)/65536.
        public struct Data: RawPairDeserializable, StringDeserializable, CharacteristicConfigurable, Hashable {
            /// `F000AA21-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA21)
            /// "Humidity Data".
            public static let name = "Humidity Data"
            /// Read and notify.
            public static let properties: CharacteristicProperties = [.read, .notify]
            /// Readable.
            public static let permissions: CharacteristicPermissions = [.readable]

            /// Temperature, raw.
            public let rawValue1: UInt16
            /// Relative humidity, raw (the low two bits are status bits).
            public let rawValue2: UInt16

            /// Wraps the raw pair.
            public init(rawValue1: UInt16, rawValue2: UInt16) {
                self.rawValue1 = rawValue1
                self.rawValue2 = rawValue2
            }

            /// Temperature in °C.
            public var temperature: Double { -46.85 + 175.72 * Double(rawValue1) / 65536 }
            /// Relative humidity in %.
            public var humidity: Double { -6 + 125 * Double(rawValue2 & ~0x0003) / 65536 }

            /// `temperature`, `humidity` and the raw values.
            public var stringValue: [String: String] {
                ["temperature": "\(temperature)", "humidity": "\(humidity)",
                 "temperatureRaw": "\(rawValue1)", "humidityRaw": "\(rawValue2)"]
            }

            /// Parses `temperatureRaw` and `humidityRaw`.
            public init?(stringValue: [String: String]) {
                guard let t = stringValue["temperatureRaw"].flatMap({ UInt16($0) }),
                      let h = stringValue["humidityRaw"].flatMap({ UInt16($0) }) else { return nil }
                self.init(rawValue1: t, rawValue2: h)
            }
        }

        /// Sensor switch, `F000AA22-…`: 0 = off, 1 = on.
        public enum Enabled: UInt8, SensorTagEnabled {
            /// Off.
            case no = 0
            /// On.
            case yes = 1
            /// `F000AA22-0451-4000-B000-000000000000`.
            public static let uuid = TISensorTag.uuid(0xAA22)
            /// "Humidity Enabled".
            public static let name = "Humidity Enabled"
        }
    }
}
