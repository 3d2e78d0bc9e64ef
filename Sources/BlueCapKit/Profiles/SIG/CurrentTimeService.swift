// Current Time Service (0x1805): Current Time (0x2A2B), Exact Time 256.

import Foundation

extension BLESIGGATT {
    /// Current Time Service, `0x1805`.
    public enum CurrentTimeService: ServiceConfigurable {
        /// `0x1805`.
        public static let uuid = BLEUUID(shortValue: 0x1805)
        /// "Current Time".
        public static let name = "Current Time"
        /// "GATT".
        public static let tag = BLESIGGATT.tag

        /// The service profile with CurrentTime.
        public static var profile: ConfiguredServiceProfile<CurrentTimeService> {
            ConfiguredServiceProfile(characteristics: [DeserializableCharacteristicProfile<CurrentTime>()])
        }

        /// Current Time, `0x2A2B`, read + notify: Exact Time 256 (date time, day of week,
        /// fractions of 1/256 s) then the adjust reason. 10 bytes.
        public struct CurrentTime: FixedWidthDeserializable, StringDeserializable, CharacteristicConfigurable, Hashable {
            /// Why the time was last adjusted (bit mask).
            public struct AdjustReason: OptionSet, Hashable, Sendable {
                /// The bits.
                public let rawValue: UInt8
                /// Wraps bits.
                public init(rawValue: UInt8) { self.rawValue = rawValue }
                /// Manual time update.
                public static let manualTimeUpdate = AdjustReason(rawValue: 0x01)
                /// External reference time update.
                public static let externalReferenceTimeUpdate = AdjustReason(rawValue: 0x02)
                /// Change of time zone.
                public static let changeOfTimeZone = AdjustReason(rawValue: 0x04)
                /// Change of daylight saving time.
                public static let changeOfDST = AdjustReason(rawValue: 0x08)
            }

            /// `0x2A2B`.
            public static let uuid = BLEUUID(shortValue: 0x2A2B)
            /// "Current Time".
            public static let name = "Current Time"
            /// Read and notify.
            public static let properties: CharacteristicProperties = [.read, .notify]
            /// Readable.
            public static let permissions: CharacteristicPermissions = [.readable]

            /// Date and time of day.
            public var dateTime: GATTDateTime
            /// Day of week: 1 = Monday … 7 = Sunday, 0 = unknown.
            public var dayOfWeek: UInt8
            /// Fractions of a second in 1/256 units.
            public var fractions256: UInt8
            /// Why the time was last adjusted.
            public var adjustReason: AdjustReason

            /// A current time; nil when `dayOfWeek` exceeds 7.
            public init?(dateTime: GATTDateTime, dayOfWeek: UInt8, fractions256: UInt8 = 0, adjustReason: AdjustReason = []) {
                guard dayOfWeek <= 7 else { return nil }
                self.dateTime = dateTime
                self.dayOfWeek = dayOfWeek
                self.fractions256 = fractions256
                self.adjustReason = adjustReason
            }

            /// The current time of `date` in `timeZone`, with the day of week and 1/256 s fractions.
            public init(date: Date, timeZone: TimeZone = .current, adjustReason: AdjustReason = []) {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = timeZone
                let weekday = calendar.component(.weekday, from: date)  // 1 = Sunday
                dateTime = GATTDateTime(date: date, timeZone: timeZone)
                dayOfWeek = UInt8((weekday + 5) % 7 + 1)
                let fraction = date.timeIntervalSince1970 - date.timeIntervalSince1970.rounded(.down)
                fractions256 = UInt8(clamping: Int(fraction * 256))
                self.adjustReason = adjustReason
            }

            /// 10 bytes.
            public static var size: Int { 10 }

            /// Decodes 10 bytes; out-of-range fields throw ``SerDeError/malformed(type:reason:)``.
            public init(deserializing data: Data) throws(SerDeError) {
                guard data.count == 10 else { throw .wrongLength(CurrentTime.self, expected: 10, actual: data.count) }
                let bytes = Data(data)
                let dateTime = try GATTDateTime(deserializing: bytes.prefix(7))
                guard let value = CurrentTime(dateTime: dateTime, dayOfWeek: bytes[7], fractions256: bytes[8],
                                              adjustReason: AdjustReason(rawValue: bytes[9])) else {
                    throw .malformed(CurrentTime.self, "day of week \(bytes[7]) is not 0…7")
                }
                self = value
            }

            /// The 10-byte encoding.
            public func serialized() -> Data {
                dateTime.serialized() + Data([dayOfWeek, fractions256, adjustReason.rawValue])
            }

            /// `dateTime`, `dayOfWeek`, `fractions256`, `adjustReason`.
            public var stringValue: [String: String] {
                ["dateTime": dateTime.description, "dayOfWeek": "\(dayOfWeek)",
                 "fractions256": "\(fractions256)", "adjustReason": "\(adjustReason.rawValue)"]
            }

            /// Parses the keys written by ``stringValue`` (`dateTime` as `YYYY-MM-DD hh:mm:ss`).
            public init?(stringValue: [String: String]) {
                guard let text = stringValue["dateTime"] else { return nil }
                let numbers = text.split(whereSeparator: { "- :".contains($0) }).map { Int($0) }
                guard numbers.count == 6, !numbers.contains(nil),
                      let year = UInt16(exactly: numbers[0]!),
                      let fields = Optional(numbers[1...].map { UInt8(exactly: $0!) }), !fields.contains(nil),
                      let dateTime = GATTDateTime(year: year, month: fields[0]!, day: fields[1]!,
                                                  hours: fields[2]!, minutes: fields[3]!, seconds: fields[4]!),
                      let day = UInt8(stringValue["dayOfWeek"] ?? "0"),
                      let fractions = UInt8(stringValue["fractions256"] ?? "0"),
                      let reason = UInt8(stringValue["adjustReason"] ?? "0") else { return nil }
                self.init(dateTime: dateTime, dayOfWeek: day, fractions256: fractions, adjustReason: AdjustReason(rawValue: reason))
            }
        }
    }
}
