// BLESIGGATT: Bluetooth SIG-defined services: Battery, Device Information, Heart Rate, Current Time,
// Health Thermometer.

import Foundation

/// Profiles of services defined by the Bluetooth SIG (16-bit UUIDs in the base range).
public enum BLESIGGATT {
    /// The tag used by every SIG service profile.
    public static let tag = "GATT"

    /// Every SIG service profile defined here.
    public static var serviceProfiles: [ServiceProfile] {
        [
            BatteryService.profile.serviceProfile,
            DeviceInformationService.profile.serviceProfile,
            HeartRateService.profile.serviceProfile,
            CurrentTimeService.profile.serviceProfile,
            HealthThermometerService.profile.serviceProfile,
        ]
    }

    // MARK: - Battery

    /// Battery Service, `0x180F`.
    public enum BatteryService: ServiceConfigurable {
        /// `0x180F`.
        public static let uuid = BLEUUID(shortValue: 0x180F)
        /// "Battery Service".
        public static let name = "Battery Service"
        /// "GATT".
        public static let tag = BLESIGGATT.tag

        /// The service profile with Level.
        public static var profile: ConfiguredServiceProfile<BatteryService> {
            ConfiguredServiceProfile(characteristics: [RawCharacteristicProfile<Level>()])
        }

        /// Battery Level, `0x2A19`, read + notify: UInt8 percent, 0…100 (other values are rejected).
        public struct Level: RawDeserializable, StringDeserializable, CharacteristicConfigurable, Hashable {
            /// `0x2A19`.
            public static let uuid = BLEUUID(shortValue: 0x2A19)
            /// "Battery Level".
            public static let name = "Battery Level"
            /// Read and notify.
            public static let properties: CharacteristicProperties = [.read, .notify]
            /// Readable.
            public static let permissions: CharacteristicPermissions = [.readable]
            /// 100 %.
            public static let initialValue: Data? = Data([100])

            /// The charge in percent, 0…100.
            public let rawValue: UInt8

            /// nil above 100 %.
            public init?(rawValue: UInt8) {
                guard rawValue <= 100 else { return nil }
                self.rawValue = rawValue
            }

            /// `["level": percent]`.
            public var stringValue: [String: String] { ["level": "\(rawValue)"] }
            /// Parses `"level"`.
            public init?(stringValue: [String: String]) {
                guard let level = stringValue["level"].flatMap({ UInt8($0) }) else { return nil }
                self.init(rawValue: level)
            }
        }
    }

    // MARK: - Device Information

    /// Device Information Service, `0x180A`: read-only UTF-8 strings.
    public enum DeviceInformationService: ServiceConfigurable {
        /// `0x180A`.
        public static let uuid = BLEUUID(shortValue: 0x180A)
        /// "Device Information".
        public static let name = "Device Information"
        /// "GATT".
        public static let tag = BLESIGGATT.tag

        /// The service profile with the six string characteristics.
        public static var profile: ConfiguredServiceProfile<DeviceInformationService> {
            ConfiguredServiceProfile(characteristics: [
                StringCharacteristicProfile<ManufacturerName>(),
                StringCharacteristicProfile<ModelNumber>(),
                StringCharacteristicProfile<SerialNumber>(),
                StringCharacteristicProfile<FirmwareRevision>(),
                StringCharacteristicProfile<HardwareRevision>(),
                StringCharacteristicProfile<SoftwareRevision>(),
            ])
        }

        /// Manufacturer Name String, `0x2A29`.
        public enum ManufacturerName: DeviceInformationString {
            /// `0x2A29`.
            public static let uuid = BLEUUID(shortValue: 0x2A29)
            /// "Manufacturer Name".
            public static let name = "Manufacturer Name"
        }

        /// Model Number String, `0x2A24`.
        public enum ModelNumber: DeviceInformationString {
            /// `0x2A24`.
            public static let uuid = BLEUUID(shortValue: 0x2A24)
            /// "Model Number".
            public static let name = "Model Number"
        }

        /// Serial Number String, `0x2A25`.
        public enum SerialNumber: DeviceInformationString {
            /// `0x2A25`.
            public static let uuid = BLEUUID(shortValue: 0x2A25)
            /// "Serial Number".
            public static let name = "Serial Number"
        }

        /// Firmware Revision String, `0x2A26`.
        public enum FirmwareRevision: DeviceInformationString {
            /// `0x2A26`.
            public static let uuid = BLEUUID(shortValue: 0x2A26)
            /// "Firmware Revision".
            public static let name = "Firmware Revision"
        }

        /// Hardware Revision String, `0x2A27`.
        public enum HardwareRevision: DeviceInformationString {
            /// `0x2A27`.
            public static let uuid = BLEUUID(shortValue: 0x2A27)
            /// "Hardware Revision".
            public static let name = "Hardware Revision"
        }

        /// Software Revision String, `0x2A28`.
        public enum SoftwareRevision: DeviceInformationString {
            /// `0x2A28`.
            public static let uuid = BLEUUID(shortValue: 0x2A28)
            /// "Software Revision".
            public static let name = "Software Revision"
        }
    }
}

/// A read-only Device Information string characteristic.
public protocol DeviceInformationString: CharacteristicConfigurable {}

extension DeviceInformationString {
    /// Read only.
    public static var properties: CharacteristicProperties { [.read] }
    /// Readable.
    public static var permissions: CharacteristicPermissions { [.readable] }
}
