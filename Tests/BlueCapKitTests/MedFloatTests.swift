// IEEE 11073 SFLOAT and FLOAT.

import Foundation
import Testing
@testable import BlueCapKit

@Suite("IEEE 11073 numbers")
struct MedFloatTests {
    @Test("SFLOAT packs a 4-bit exponent over a 12-bit mantissa")
    func sfloatBytes() throws {
        let value = try #require(MedFloat16(mantissa: 365, exponent: -1))
        #expect([UInt8](value.serialized()) == [0x6D, 0xF1])
        #expect(SerDe.deserialize(Data([0x6D, 0xF1]), as: MedFloat16.self) == value)
        #expect(abs(value.doubleValue - 36.5) < 1e-12)
        let negative = try #require(MedFloat16(mantissa: -2, exponent: 2))
        #expect([UInt8](negative.serialized()) == [0xFE, 0x2F])
        #expect(SerDe.deserialize(negative.serialized(), as: MedFloat16.self)?.doubleValue == -200)
        #expect(MedFloat16(mantissa: 2048, exponent: 0) == nil)
        #expect(MedFloat16(mantissa: 1, exponent: 8) == nil)
        #expect(SerDe.deserialize(Data([0x6D]), as: MedFloat16.self) == nil)
    }

    @Test("SFLOAT special values decode to NaN and infinities")
    func sfloatSpecials() {
        let cases: [(UInt16, MedFloatSpecial)] = [
            (0x07FF, .nan), (0x0800, .notAtThisResolution), (0x07FE, .positiveInfinity),
            (0x0802, .negativeInfinity), (0x0801, .reserved),
        ]
        for (raw, special) in cases {
            let value = SerDe.deserialize(raw.serialized(), as: MedFloat16.self)
            #expect(value?.specialValue == special)
            #expect(MedFloat16(special: special).serialized() == raw.serialized())
        }
        #expect(MedFloat16(.infinity).doubleValue == .infinity)
        #expect(MedFloat16(-.infinity).doubleValue == -.infinity)
        #expect(MedFloat16(.nan).doubleValue.isNaN)
        #expect(MedFloat16(1e12).specialValue == .notAtThisResolution)
    }

    @Test("FLOAT encodes the Health Thermometer's 36.6 °C and round-trips from doubles")
    func float32() throws {
        let value = MedFloat32(36.6)
        #expect(value.mantissa == 366 && value.exponent == -1)
        #expect([UInt8](value.serialized()) == [0x6E, 0x01, 0x00, 0xFF])
        #expect(SerDe.deserialize(Data([0x6E, 0x01, 0x00, 0xFF]), as: MedFloat32.self) == value)
        for double in [0.0, 1.0, -1.5, 98.6, 123_456.7, -0.001] {
            #expect(abs(MedFloat32(double).doubleValue - double) <= abs(double) * 1e-9, "\(double)")
        }
        #expect(SerDe.deserialize(Data([0xFF, 0xFF, 0x7F, 0x00]), as: MedFloat32.self)?.specialValue == .nan)
        #expect(SerDe.deserialize(Data([0x02, 0x00, 0x80, 0x00]), as: MedFloat32.self)?.doubleValue == -.infinity)
        #expect(SerDe.deserialize(Data([0xFF, 0xFF, 0xFF, 0x00]), as: MedFloat32.self)?.mantissa == -1)
        #expect(SerDe.deserialize(Data(count: 5), as: MedFloat32.self) == nil)
    }
}
