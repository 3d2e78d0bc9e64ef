// GATTDateTime: the 7-byte GATT Date Time (0x2A08) record.

import Foundation

/// GATT Date Time: year (UInt16 LE, 1582…9999, 0 = unknown), month (1…12, 0 = unknown),
/// day (1…31, 0 = unknown), hours (0…23), minutes (0…59), seconds (0…59). Out-of-range fields
/// throw ``SerDeError/malformed(type:reason:)``.
public struct GATTDateTime: FixedWidthDeserializable, Hashable, CustomStringConvertible {
    /// Year, 1582…9999, or 0 when unknown.
    public var year: UInt16
    /// Month, 1…12, or 0 when unknown.
    public var month: UInt8
    /// Day of the month, 1…31, or 0 when unknown.
    public var day: UInt8
    /// Hours, 0…23.
    public var hours: UInt8
    /// Minutes, 0…59.
    public var minutes: UInt8
    /// Seconds, 0…59.
    public var seconds: UInt8

    /// A date time from its fields; nil when one is out of range.
    public init?(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
        guard year == 0 || (1582...9999).contains(year), month <= 12, day <= 31,
              hours <= 23, minutes <= 59, seconds <= 59 else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    /// The fields of `date` in `timeZone`'s Gregorian calendar (fractions of a second dropped).
    public init(date: Date, timeZone: TimeZone = .current) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        year = UInt16(clamping: c.year ?? 0)
        month = UInt8(clamping: c.month ?? 0)
        day = UInt8(clamping: c.day ?? 0)
        hours = UInt8(clamping: c.hour ?? 0)
        minutes = UInt8(clamping: c.minute ?? 0)
        seconds = UInt8(clamping: c.second ?? 0)
    }

    /// The instant in `timeZone`, or nil when year, month or day is unknown.
    public func date(in timeZone: TimeZone = .current) -> Date? {
        guard year != 0, month != 0, day != 0 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.date(from: DateComponents(
            year: Int(year), month: Int(month), day: Int(day),
            hour: Int(hours), minute: Int(minutes), second: Int(seconds)))
    }

    /// 7 bytes.
    public static var size: Int { 7 }

    /// Decodes 7 bytes, validating every field.
    public init(deserializing data: Data) throws(SerDeError) {
        var reader = ByteReader(data, for: GATTDateTime.self)
        guard data.count == 7 else { throw .wrongLength(GATTDateTime.self, expected: 7, actual: data.count) }
        let year: UInt16 = try reader.read()
        let fields: [UInt8] = [try reader.read(), try reader.read(), try reader.read(), try reader.read(), try reader.read()]
        guard let value = GATTDateTime(year: year, month: fields[0], day: fields[1],
                                       hours: fields[2], minutes: fields[3], seconds: fields[4]) else {
            throw .malformed(GATTDateTime.self, "field out of range in \(year)-\(fields)")
        }
        self = value
    }

    /// The 7-byte encoding.
    public func serialized() -> Data {
        year.serialized() + Data([month, day, hours, minutes, seconds])
    }

    /// `YYYY-MM-DD hh:mm:ss`.
    public var description: String {
        func two(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(hours)):\(two(minutes)):\(two(seconds))"
    }
}
