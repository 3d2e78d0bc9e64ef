// Bluetooth SIG profiles: Heart Rate byte by byte, Battery, Current Time, Health Thermometer.

import Foundation
import Testing
@testable import BlueCapKit

@Suite("Bluetooth SIG profiles")
struct SIGProfileTests {
    typealias Measurement = BLESIGGATT.HeartRateService.Measurement

    @Test("heart rate with a UInt8 value: flags 0x00 then one byte")
    func heartRateUInt8() throws {
        let m = try SerDe.decode(Measurement.self, from: Data([0x00, 72]))
        #expect(m.heartRate == 72 && !m.usesUInt16Format && m.sensorContact == .notSupported)
        #expect(m.energyExpended == nil && m.rrIntervals.isEmpty)
        #expect([UInt8](SerDe.serialize(Measurement(heartRate: 72))) == [0x00, 72])
        #expect([UInt8](SerDe.serialize(Measurement(heartRate: 255))) == [0x00, 0xFF])
    }

    @Test("heart rate with a UInt16 value: flags bit 0, little-endian, chosen above 255 or on request")
    func heartRateUInt16() throws {
        let m = try SerDe.decode(Measurement.self, from: Data([0x01, 0x2C, 0x01]))
        #expect(m.heartRate == 300 && m.usesUInt16Format)
        #expect([UInt8](SerDe.serialize(Measurement(heartRate: 300))) == [0x01, 0x2C, 0x01])
        #expect([UInt8](SerDe.serialize(Measurement(heartRate: 60, forceUInt16: true))) == [0x01, 60, 0])
        #expect(SerDe.deserialize(Data([0x01, 0x2C]), as: Measurement.self) == nil)
    }

    @Test("sensor contact bits 1–2 decode to the three states")
    func sensorContact() throws {
        #expect(try SerDe.decode(Measurement.self, from: Data([0x02, 60])).sensorContact == .notSupported)
        #expect(try SerDe.decode(Measurement.self, from: Data([0x04, 60])).sensorContact == .notDetected)
        #expect(try SerDe.decode(Measurement.self, from: Data([0x06, 60])).sensorContact == .detected)
        #expect(SerDe.serialize(Measurement(heartRate: 60, sensorContact: .detected)).first == 0x06)
        #expect(SerDe.serialize(Measurement(heartRate: 60, sensorContact: .notDetected)).first == 0x04)
    }

    @Test("energy expended (bit 3) follows the heart rate as UInt16")
    func energyExpended() throws {
        let m = try SerDe.decode(Measurement.self, from: Data([0x08, 80, 0x10, 0x27]))
        #expect(m.heartRate == 80 && m.energyExpended == 10_000)
        #expect([UInt8](SerDe.serialize(m)) == [0x08, 80, 0x10, 0x27])
        #expect(throws: SerDeError.wrongLength(type: "Measurement", expected: 4, actual: 3, atLeast: true)) {
            try SerDe.decode(Measurement.self, from: Data([0x08, 80, 0x10]))
        }
    }

    @Test("RR intervals (bit 4) fill the rest in 1/1024 s units; odd or missing bytes are errors")
    func rrIntervals() throws {
        let m = try SerDe.decode(Measurement.self, from: Data([0x10, 75, 0x00, 0x04, 0x00, 0x02]))
        #expect(m.rrIntervals == [1024, 512] && m.rrIntervalsInSeconds == [1.0, 0.5])
        #expect([UInt8](SerDe.serialize(m)) == [0x10, 75, 0x00, 0x04, 0x00, 0x02])
        #expect(throws: SerDeError.self) { try SerDe.decode(Measurement.self, from: Data([0x10, 75, 0x00])) }
        #expect(throws: SerDeError.wrongLength(type: "Measurement", expected: 4, actual: 2, atLeast: true)) {
            try SerDe.decode(Measurement.self, from: Data([0x10, 75]))
        }
    }

    @Test("all flags together, and trailing bytes without the RR flag are rejected")
    func allFlags() throws {
        let bytes: [UInt8] = [0x1F, 0x2C, 0x01, 0xE8, 0x03, 0x20, 0x03, 0x40, 0x03]
        let m = try SerDe.decode(Measurement.self, from: Data(bytes))
        #expect(m == Measurement(heartRate: 300, sensorContact: .detected, energyExpended: 1000, rrIntervals: [800, 832]))
        #expect([UInt8](SerDe.serialize(m)) == bytes)
        #expect(m.flags == 0x1F)
        #expect(SerDe.deserialize(Data([0x00, 72, 0]), as: Measurement.self) == nil)
        #expect(SerDe.deserialize(Data([0x00]), as: Measurement.self) == nil)
        #expect(SerDe.deserialize(Data(), as: Measurement.self) == nil)
        #expect(Measurement(stringValue: m.stringValue) == m)
        #expect(m.stringValue["rrIntervals"] == "800,832")
    }

    @Test("body sensor location and control point are UInt8 enums")
    func heartRateEnums() {
        #expect(SerDe.deserialize(Data([1]), as: BLESIGGATT.HeartRateService.BodySensorLocation.self) == .chest)
        #expect(SerDe.deserialize(Data([7]), as: BLESIGGATT.HeartRateService.BodySensorLocation.self) == nil)
        #expect(SerDe.serialize(BLESIGGATT.HeartRateService.ControlPoint.resetEnergyExpended) == Data([1]))
        #expect(BLESIGGATT.HeartRateService.profile.characteristics.map(\.uuid.shortString) == ["2A37", "2A38", "2A39"])
    }

    @Test("battery level is a UInt8 percent, 0…100")
    func batteryLevel() {
        typealias Level = BLESIGGATT.BatteryService.Level
        #expect(SerDe.deserialize(Data([0]), as: Level.self)?.rawValue == 0)
        #expect(SerDe.deserialize(Data([100]), as: Level.self)?.rawValue == 100)
        #expect(SerDe.deserialize(Data([101]), as: Level.self) == nil)
        #expect(SerDe.deserialize(Data([50, 0]), as: Level.self) == nil)
        #expect(SerDe.serialize(Level(rawValue: 42)!) == Data([42]))
    }

    @Test("current time is exact time 256 plus adjust reason, 10 bytes")
    func currentTime() throws {
        typealias CurrentTime = BLESIGGATT.CurrentTimeService.CurrentTime
        let bytes: [UInt8] = [0xE8, 0x07, 3, 15, 13, 45, 30, 5, 128, 0x03]
        let time = try SerDe.decode(CurrentTime.self, from: Data(bytes))
        #expect(time.dateTime.year == 2024 && time.dateTime.month == 3 && time.dateTime.day == 15)
        #expect(time.dateTime.hours == 13 && time.dateTime.minutes == 45 && time.dateTime.seconds == 30)
        #expect(time.dayOfWeek == 5 && time.fractions256 == 128)
        #expect(time.adjustReason == [.manualTimeUpdate, .externalReferenceTimeUpdate])
        #expect([UInt8](SerDe.serialize(time)) == bytes)
        #expect(CurrentTime(stringValue: time.stringValue) == time)
        var badMonth = bytes; badMonth[2] = 13
        #expect(throws: SerDeError.self) { try SerDe.decode(CurrentTime.self, from: Data(badMonth)) }
        var badDay = bytes; badDay[7] = 8
        #expect(throws: SerDeError.self) { try SerDe.decode(CurrentTime.self, from: Data(badDay)) }
        #expect(SerDe.deserialize(Data(bytes.dropLast()), as: CurrentTime.self) == nil)
        let utc = TimeZone(identifier: "UTC")!
        let date = Date(timeIntervalSince1970: 1_710_510_330.5)  // 2024-03-15 13:45:30.5 UTC, a Friday
        let fromDate = CurrentTime(date: date, timeZone: utc)
        #expect(fromDate.dateTime == time.dateTime && fromDate.dayOfWeek == 5 && fromDate.fractions256 == 128)
        #expect(time.dateTime.date(in: utc) == Date(timeIntervalSince1970: 1_710_510_330))
    }

    @Test("health thermometer measurement carries a FLOAT, optional time stamp and type")
    func thermometer() throws {
        typealias Measurement = BLESIGGATT.HealthThermometerService.TemperatureMeasurement
        let plain = try SerDe.decode(Measurement.self, from: Data([0x00, 0x6E, 0x01, 0x00, 0xFF]))
        #expect(abs(plain.temperature.doubleValue - 36.6) < 1e-9 && !plain.isFahrenheit)
        let stamp = GATTDateTime(year: 2024, month: 1, day: 2, hours: 3, minutes: 4, seconds: 5)!
        let full = Measurement(temperature: MedFloat32(98.6), isFahrenheit: true, timeStamp: stamp, temperatureType: 6)
        let bytes = [UInt8](SerDe.serialize(full))
        #expect(bytes == [0x07, 0xDA, 0x03, 0x00, 0xFF, 0xE8, 0x07, 1, 2, 3, 4, 5, 6])
        #expect(SerDe.deserialize(Data(bytes), as: Measurement.self) == full)
        #expect(SerDe.deserialize(Data(bytes.dropLast()), as: Measurement.self) == nil)
        #expect(SerDe.deserialize(Data(bytes + [0]), as: Measurement.self) == nil)
    }
}
