// Heart Rate Measurement (0x2A37): a flags byte, then the fields it announces.

import Foundation

extension BLESIGGATT.HeartRateService {
    /// Heart Rate Measurement, `0x2A37`, notify.
    ///
    /// Layout: flags (UInt8) — bit 0 value format (0 UInt8, 1 UInt16), bit 1 contact detected,
    /// bit 2 contact supported, bit 3 Energy Expended present, bit 4 RR-Intervals present —
    /// then the heart rate (bpm), the energy expended (UInt16, kJ) when flagged, and one or more
    /// RR intervals (UInt16, 1/1024 s) when flagged. All little-endian.
    public struct Measurement: Deserializable, StringDeserializable, CharacteristicConfigurable, Hashable {
        /// The sensor contact status (flags bits 1–2).
        public enum SensorContact: String, Sendable, Hashable, CaseIterable {
            /// Contact detection is not supported (bit 2 clear).
            case notSupported
            /// Supported, contact not detected (bits 2 set, 1 clear).
            case notDetected
            /// Supported and detected (bits 2 and 1 set).
            case detected
        }

        /// `0x2A37`.
        public static let uuid = BLEUUID(shortValue: 0x2A37)
        /// "Heart Rate Measurement".
        public static let name = "Heart Rate Measurement"
        /// Notify.
        public static let properties: CharacteristicProperties = [.notify]
        /// Readable.
        public static let permissions: CharacteristicPermissions = [.readable]

        /// Beats per minute.
        public var heartRate: UInt16
        /// True when the heart rate is sent as UInt16 (flags bit 0).
        public var usesUInt16Format: Bool
        /// Sensor contact status.
        public var sensorContact: SensorContact
        /// Energy expended since the last reset, in kJ, when present.
        public var energyExpended: UInt16?
        /// RR intervals in units of 1/1024 s, in order received (empty when absent).
        public var rrIntervals: [UInt16]

        /// A measurement; the UInt16 format is used when `heartRate` exceeds 255 or `forceUInt16` is set.
        public init(heartRate: UInt16, sensorContact: SensorContact = .notSupported, energyExpended: UInt16? = nil,
                    rrIntervals: [UInt16] = [], forceUInt16: Bool = false) {
            self.heartRate = heartRate
            self.usesUInt16Format = forceUInt16 || heartRate > 0xFF
            self.sensorContact = sensorContact
            self.energyExpended = energyExpended
            self.rrIntervals = rrIntervals
        }

        /// RR intervals in seconds.
        public var rrIntervalsInSeconds: [Double] { rrIntervals.map { Double($0) / 1024 } }

        // MARK: Flags

        /// The flags byte this measurement encodes with.
        public var flags: UInt8 {
            var flags: UInt8 = usesUInt16Format || heartRate > 0xFF ? 0x01 : 0
            switch sensorContact {
            case .notSupported: break
            case .notDetected: flags |= 0x04
            case .detected: flags |= 0x06
            }
            if energyExpended != nil { flags |= 0x08 }
            if !rrIntervals.isEmpty { flags |= 0x10 }
            return flags
        }

        // MARK: Deserializable

        /// Variable length: 2…(2 + 2 + 2 + 2n) bytes.
        public static var encodedSize: Int? { nil }

        /// Decodes the flags, then exactly the fields they announce (extra bytes are an error;
        /// reserved flag bits 5–7 are ignored).
        public init(deserializing data: Data) throws(SerDeError) {
            var reader = ByteReader(data, for: Measurement.self)
            let flags: UInt8 = try reader.read()
            let wide = flags & 0x01 != 0
            heartRate = wide ? try reader.read(UInt16.self) : UInt16(try reader.read(UInt8.self))
            usesUInt16Format = wide
            switch (flags & 0x04 != 0, flags & 0x02 != 0) {
            case (false, _): sensorContact = .notSupported
            case (true, false): sensorContact = .notDetected
            case (true, true): sensorContact = .detected
            }
            energyExpended = flags & 0x08 != 0 ? try reader.read(UInt16.self) : nil
            rrIntervals = []
            if flags & 0x10 != 0 {
                guard !reader.isAtEnd else {
                    throw .wrongLength(Measurement.self, expected: reader.offset + 2, actual: data.count, atLeast: true)
                }
                guard reader.remaining % 2 == 0 else {
                    throw .malformed(Measurement.self, "RR-interval field has an odd byte count \(reader.remaining)")
                }
                while !reader.isAtEnd { rrIntervals.append(try reader.read(UInt16.self)) }
            }
            try reader.expectEnd()
        }

        /// The flags byte, then the announced fields.
        public func serialized() -> Data {
            var data = Data([flags])
            if flags & 0x01 != 0 { data += heartRate.serialized() } else { data.append(UInt8(heartRate)) }
            if let energyExpended { data += energyExpended.serialized() }
            for interval in rrIntervals { data += interval.serialized() }
            return data
        }

        // MARK: StringDeserializable

        /// `heartRate`, `sensorContact`, and `energyExpended` / `rrIntervals` (comma-separated) when present.
        public var stringValue: [String: String] {
            var strings = ["heartRate": "\(heartRate)", "sensorContact": sensorContact.rawValue]
            if let energyExpended { strings["energyExpended"] = "\(energyExpended)" }
            if !rrIntervals.isEmpty { strings["rrIntervals"] = rrIntervals.map(String.init).joined(separator: ",") }
            return strings
        }

        /// Parses the keys written by ``stringValue``.
        public init?(stringValue: [String: String]) {
            guard let rate = stringValue["heartRate"].flatMap({ UInt16($0) }) else { return nil }
            let contact = stringValue["sensorContact"].map { SensorContact(rawValue: $0) } ?? .notSupported
            guard let contact else { return nil }
            var energy: UInt16?
            if let text = stringValue["energyExpended"] {
                guard let value = UInt16(text) else { return nil }
                energy = value
            }
            var intervals: [UInt16] = []
            if let text = stringValue["rrIntervals"] {
                let parsed = text.split(separator: ",").map { UInt16($0.trimmingCharacters(in: .whitespaces)) }
                guard !parsed.contains(nil) else { return nil }
                intervals = parsed.compactMap { $0 }
            }
            self.init(heartRate: rate, sensorContact: contact, energyExpended: energy, rrIntervals: intervals)
        }
    }
}
