// TI SensorTag profiles: accelerometer per the design contract, and the other sensors.

import Foundation
import Testing
@testable import BlueCapKit

@Suite("TI SensorTag profiles")
struct SensorTagTests {
    typealias Accelerometer = TISensorTag.AccelerometerService

    @Test("accelerometer UUIDs, names and access match the design contract")
    func accelerometerIdentity() {
        #expect(Accelerometer.uuid.uuidString == "f000aa10-0451-4000-b000-000000000000")
        #expect(Accelerometer.name == "TI Accelerometer")
        #expect(Accelerometer.Data.uuid == BLEUUID(string: "F000AA11-0451-4000-B000-000000000000"))
        #expect(Accelerometer.Enabled.uuid == BLEUUID(string: "F000AA12-0451-4000-B000-000000000000"))
        #expect(Accelerometer.UpdatePeriod.uuid == BLEUUID(string: "F000AA13-0451-4000-B000-000000000000"))
        #expect(Accelerometer.Data.properties == [.read, .notify])
        #expect(Accelerometer.Enabled.properties == [.read, .write])
        #expect(Accelerometer.UpdatePeriod.properties == [.read, .write])
        #expect(Accelerometer.Enabled.initialValue == Data([0]))
        #expect(Accelerometer.UpdatePeriod.initialValue == Data([100]))
        let profile = Accelerometer.profile
        #expect(profile.characteristics.map(\.uuid) == [Accelerometer.Data.uuid, Accelerometer.Enabled.uuid, Accelerometer.UpdatePeriod.uuid])
    }

    @Test("accelerometer data is 3 × Int8 with x = −raw0/64, y = −raw1/64, z = raw2/64 g")
    func accelerometerConversion() throws {
        let sample = try SerDe.decode(Accelerometer.Data.self, from: Data([0x40, 0xE0, 0xC0]))
        #expect(sample.xRaw == 64 && sample.yRaw == -32 && sample.zRaw == -64)
        #expect(sample.x == -1.0)
        #expect(sample.y == 0.5)
        #expect(sample.z == -1.0)
        let extremes = try SerDe.decode(Accelerometer.Data.self, from: Data([0x80, 0x7F, 0x7F]))
        #expect(extremes.x == 2.0 && extremes.y == -127.0 / 64 && extremes.z == 127.0 / 64)
        let built = Accelerometer.Data(x: 0.25, y: -0.5, z: 1.0)
        #expect([UInt8](SerDe.serialize(built)) == [0xF0, 0x20, 0x40])
        #expect(Accelerometer.Data(x: 10, y: -10, z: 10).rawValue == [-128, 127, 127])
        #expect(SerDe.deserialize(Data([1, 2]), as: Accelerometer.Data.self) == nil)
        #expect(SerDe.deserialize(Data([1, 2, 3, 4]), as: Accelerometer.Data.self) == nil)
        #expect(sample.stringValue["x"] == "-1.0" && sample.stringValue["yRaw"] == "-32")
        #expect(Accelerometer.Data(stringValue: sample.stringValue) == sample)
    }

    @Test("accelerometer enable is a UInt8 switch, 0 = no, 1 = yes")
    func accelerometerEnabled() {
        #expect(SerDe.serialize(Accelerometer.Enabled.yes) == Data([1]))
        #expect(SerDe.deserialize(Data([0]), as: Accelerometer.Enabled.self) == .no)
        #expect(SerDe.deserialize(Data([2]), as: Accelerometer.Enabled.self) == nil)
        #expect(Accelerometer.Enabled.yes.stringValue == ["Accelerometer Enabled": "Yes"])
        #expect(Accelerometer.Enabled(stringValue: ["Accelerometer Enabled": "No"]) == .no)
        #expect(Accelerometer.Enabled.stringValues == ["No", "Yes"])
    }

    @Test("update period is max(10, 10 × raw) ms, with a 10 ms floor")
    func updatePeriodFloor() {
        #expect(Accelerometer.UpdatePeriod(rawValue: 0).period == 10)
        #expect(Accelerometer.UpdatePeriod(rawValue: 1).period == 10)
        #expect(Accelerometer.UpdatePeriod(rawValue: 2).period == 20)
        #expect(Accelerometer.UpdatePeriod(rawValue: 100).period == 1000)
        #expect(Accelerometer.UpdatePeriod(rawValue: 255).period == 2550)
        #expect(Accelerometer.UpdatePeriod(milliseconds: 0).rawValue == 1)
        #expect(Accelerometer.UpdatePeriod(milliseconds: 254).rawValue == 25)
        #expect(Accelerometer.UpdatePeriod(milliseconds: 100_000).rawValue == 255)
        #expect(SerDe.deserialize(Data([50]), as: Accelerometer.UpdatePeriod.self)?.period == 500)
        #expect(SerDe.deserialize(Data([50, 0]), as: Accelerometer.UpdatePeriod.self) == nil)
        let profile = RawCharacteristicProfile<Accelerometer.UpdatePeriod>()
        #expect(profile.stringValue(Data([0])) == ["period": "10", "periodRaw": "0"])
        #expect(profile.data(fromString: ["period": "300"]) == Data([30]))
    }

    @Test("magnetometer, gyroscope, temperature and humidity convert raw samples")
    func otherSensors() throws {
        let magnet = try SerDe.decode(TISensorTag.MagnetometerService.Data.self, from: Data([0x00, 0x40, 0x00, 0xC0, 0x00, 0x80]))
        #expect(magnet.x == -500 && magnet.y == 500 && magnet.z == -1000)
        let gyro = try SerDe.decode(TISensorTag.GyroscopeService.Data.self, from: Data([0x00, 0x80, 0xFF, 0x7F, 0x00, 0x00]))
        #expect(gyro.x == -250 && gyro.z == 0)
        #expect(abs(gyro.y - 32767 * 500 / 65536) < 1e-12)
        #expect(SerDe.serialize(TISensorTag.GyroscopeService.Enabled.all) == Data([7]))
        let temperature = try SerDe.decode(TISensorTag.TemperatureService.Data.self, from: Data([0x00, 0x00, 0x00, 0x0C]))
        #expect(temperature.ambientTemperature == 24.0)
        #expect(abs(temperature.objectTemperature - 24.0) < 5, "zero thermopile voltage reads near ambient")
        let humidity = try SerDe.decode(TISensorTag.HumidityService.Data.self, from: Data([0x00, 0x80, 0x03, 0x80]))
        #expect(abs(humidity.temperature - (-46.85 + 175.72 / 2)) < 1e-9)
        #expect(abs(humidity.humidity - (-6 + 125.0 / 2)) < 1e-9, "status bits are cleared")
        #expect(SerDe.deserialize(Data(count: 3), as: TISensorTag.HumidityService.Data.self) == nil)
    }
}
