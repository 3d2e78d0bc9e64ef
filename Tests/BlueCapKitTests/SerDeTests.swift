// Scalar, string and raw-type serialization.

import Foundation
import Testing
@testable import BlueCapKit

// MARK: - Fixtures

enum Switch: UInt8, RawDeserializable { case off = 0, on = 1 }

enum Label: String, RawDeserializable { case alpha, beta }

struct Triple: RawArrayDeserializable, Equatable {
    static let size = 3
    let rawValue: [Int16]
    init?(rawValue: [Int16]) {
        guard rawValue.count == 3, rawValue.allSatisfy({ $0 >= -1000 }) else { return nil }
        self.rawValue = rawValue
    }
}

struct Reading: RawPairDeserializable, Equatable {
    let rawValue1: UInt8
    let rawValue2: Int32
    init?(rawValue1: UInt8, rawValue2: Int32) {
        self.rawValue1 = rawValue1
        self.rawValue2 = rawValue2
    }
}

struct Calibration: RawArrayPairDeserializable, Equatable {
    static let size1 = 2
    static let size2 = 3
    let rawValue1: [UInt16]
    let rawValue2: [Int8]
    init?(rawValue1: [UInt16], rawValue2: [Int8]) {
        guard rawValue1.count == 2, rawValue2.count == 3 else { return nil }
        self.rawValue1 = rawValue1
        self.rawValue2 = rawValue2
    }
}

/// Serializes, checks the bytes, deserializes, checks the value.
func roundTrip<T: Deserializable & Equatable>(_ value: T, _ bytes: [UInt8]) {
    let data = SerDe.serialize(value)
    #expect([UInt8](data) == bytes, "\(T.self) \(value)")
    #expect(SerDe.deserialize(data, as: T.self) == value)
}

// MARK: - Integers

@Suite("SerDe scalars")
struct SerDeScalarTests {
    @Test("every integer width round-trips its min, max and a mixed value, little-endian")
    func integerBoundaries() {
        roundTrip(Int8.min, [0x80]); roundTrip(Int8.max, [0x7F]); roundTrip(Int8(-2), [0xFE])
        roundTrip(UInt8.min, [0x00]); roundTrip(UInt8.max, [0xFF])
        roundTrip(Int16.min, [0x00, 0x80]); roundTrip(Int16.max, [0xFF, 0x7F]); roundTrip(Int16(-2), [0xFE, 0xFF])
        roundTrip(UInt16.min, [0, 0]); roundTrip(UInt16.max, [0xFF, 0xFF]); roundTrip(UInt16(0x1234), [0x34, 0x12])
        roundTrip(Int32.min, [0, 0, 0, 0x80]); roundTrip(Int32.max, [0xFF, 0xFF, 0xFF, 0x7F])
        roundTrip(UInt32.max, [0xFF, 0xFF, 0xFF, 0xFF]); roundTrip(UInt32(0x1234_5678), [0x78, 0x56, 0x34, 0x12])
        roundTrip(Int64.min, [0, 0, 0, 0, 0, 0, 0, 0x80]); roundTrip(Int64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        roundTrip(UInt64.max, [UInt8](repeating: 0xFF, count: 8))
        roundTrip(UInt64(0x0102_0304_0506_0708), [8, 7, 6, 5, 4, 3, 2, 1])
        roundTrip(Int64(-1), [UInt8](repeating: 0xFF, count: 8))
    }

    @Test("short and long buffers give nil and a typed error naming expected and actual counts")
    func wrongLengths() {
        #expect(SerDe.deserialize(Data([1]), as: UInt16.self) == nil)
        #expect(SerDe.deserialize(Data([1, 2, 3]), as: UInt16.self) == nil)
        #expect(SerDe.deserialize(Data(), as: UInt8.self) == nil)
        #expect(SerDe.deserialize(Data(count: 9), as: Int64.self) == nil)
        #expect(SerDe.deserialize(Data(count: 3), as: Float.self) == nil)
        #expect(SerDe.deserialize(Data(count: 7), as: Double.self) == nil)
        #expect(throws: SerDeError.wrongLength(type: "UInt32", expected: 4, actual: 5, atLeast: false)) {
            try SerDe.decode(UInt32.self, from: Data(count: 5))
        }
        #expect(throws: SerDeError.wrongLength(type: "Int16", expected: 2, actual: 0, atLeast: false)) {
            try SerDe.decode(Int16.self, from: Data())
        }
        let message = SerDeError.wrongLength(type: "UInt32", expected: 4, actual: 5, atLeast: false).description
        #expect(message == "UInt32: expected 4 bytes, got 5")
    }

    @Test("integers decode from Data slices that do not start at index 0")
    func slices() {
        let buffer = Data([0xAA, 0x34, 0x12, 0xBB])
        #expect(SerDe.deserialize(buffer[1..<3], as: UInt16.self) == 0x1234)
        #expect((try? SerDe.decode(UInt16.self, from: buffer, at: 1)) == 0x1234)
        #expect(throws: SerDeError.self) { try SerDe.decode(UInt16.self, from: buffer, at: 3) }
        #expect(throws: SerDeError.self) { try SerDe.decode(UInt16.self, from: buffer, at: -1) }
    }

    @Test("floats and doubles are IEEE little-endian, including NaN, infinities and signed zero")
    func floats() {
        roundTrip(Float(1.0), [0x00, 0x00, 0x80, 0x3F])
        roundTrip(Double(1.0), [0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        roundTrip(Float.infinity, [0, 0, 0x80, 0x7F]); roundTrip(-Float.infinity, [0, 0, 0x80, 0xFF])
        roundTrip(Double.infinity, [0, 0, 0, 0, 0, 0, 0xF0, 0x7F])
        roundTrip(Float.greatestFiniteMagnitude, [0xFF, 0xFF, 0x7F, 0x7F])
        roundTrip(Double.leastNonzeroMagnitude, [1, 0, 0, 0, 0, 0, 0, 0])
        let negativeZero = SerDe.deserialize(SerDe.serialize(-0.0 as Double), as: Double.self)
        #expect(negativeZero?.sign == .minus && negativeZero == 0)
        let nan = SerDe.deserialize(SerDe.serialize(Float.nan), as: Float.self)
        #expect(nan?.isNaN == true)
        let payload = Double(nan: 0x1234, signaling: false)
        #expect(SerDe.deserialize(SerDe.serialize(payload), as: Double.self)?.bitPattern == payload.bitPattern)
    }

    @Test("strings are UTF-8; invalid UTF-8 is rejected")
    func strings() {
        roundTrip("SensorTag", Array("SensorTag".utf8))
        roundTrip("é✓", [0xC3, 0xA9, 0xE2, 0x9C, 0x93])
        roundTrip("", [])
        #expect(SerDe.deserialize(Data([0x61, 0xFF]), as: String.self) == nil)
        #expect(throws: SerDeError.invalidUTF8(byteCount: 2)) { try SerDe.decode(String.self, from: Data([0xC3, 0x28])) }
        #expect(String.encodedSize == nil && UInt32.encodedSize == 4)
    }

    @Test("arrays of fixed-width values round-trip and reject partial elements")
    func arrays() {
        let values: [UInt16] = [1, 0xFFFF, 0x0201]
        let data = SerDe.serialize(values)
        #expect([UInt8](data) == [1, 0, 0xFF, 0xFF, 1, 2])
        #expect(SerDe.deserialize(data, as: [UInt16].self) == values)
        #expect(SerDe.deserialize(data.dropLast(), as: [UInt16].self) == nil)
        #expect(SerDe.deserialize(Data(), as: [UInt16].self) == [])
        #expect(throws: SerDeError.wrongLength(type: "Array<UInt16>", expected: 6, actual: 5, atLeast: false)) {
            try SerDe.decode([UInt16].self, from: data.dropLast())
        }
    }

    @Test("hex strings convert both ways and reject odd or non-hex input")
    func hex() {
        #expect(SerDe.hexString(Data([0x00, 0xAB, 0x0F])) == "00ab0f")
        #expect(SerDe.data(hexString: "00 AB0f") == Data([0x00, 0xAB, 0x0F]))
        #expect(SerDe.data(hexString: "ABC") == nil)
        #expect(SerDe.data(hexString: "zz") == nil)
    }
}

// MARK: - Raw types

@Suite("SerDe raw types")
struct SerDeRawTests {
    @Test("RawDeserializable enums round-trip and reject unknown raw values")
    func raw() {
        roundTrip(Switch.on, [1])
        roundTrip(Switch.off, [0])
        #expect(SerDe.deserialize(Data([2]), as: Switch.self) == nil)
        #expect(throws: SerDeError.invalidRawValue(type: "Switch", rawValue: "2")) { try SerDe.decode(Switch.self, from: Data([2])) }
        #expect(SerDe.deserialize(Data([1, 0]), as: Switch.self) == nil)
        roundTrip(Label.beta, Array("beta".utf8))
        #expect(SerDe.deserialize(Data("gamma".utf8), as: Label.self) == nil)
        #expect(Switch.encodedSize == 1 && Label.encodedSize == nil)
    }

    @Test("RawArrayDeserializable needs exactly size elements and a valid array")
    func rawArray() {
        roundTrip(Triple(rawValue: [1, -1, 0x0102])!, [1, 0, 0xFF, 0xFF, 2, 1])
        #expect(SerDe.deserialize(Data(count: 4), as: Triple.self) == nil)
        #expect(SerDe.deserialize(Data(count: 8), as: Triple.self) == nil)
        #expect(throws: SerDeError.wrongLength(type: "Triple", expected: 6, actual: 7, atLeast: false)) {
            try SerDe.decode(Triple.self, from: Data(count: 7))
        }
        let rejected = SerDe.serialize([Int16(-2000), 0, 0])
        #expect(throws: SerDeError.self) { try SerDe.decode(Triple.self, from: rejected) }
    }

    @Test("RawPairDeserializable splits at the first type's width")
    func rawPair() {
        roundTrip(Reading(rawValue1: 0xAB, rawValue2: -2)!, [0xAB, 0xFE, 0xFF, 0xFF, 0xFF])
        #expect(SerDe.deserialize(Data(count: 4), as: Reading.self) == nil)
        #expect(SerDe.deserialize(Data(count: 6), as: Reading.self) == nil)
        #expect(Reading.encodedSize == 5)
    }

    @Test("RawArrayPairDeserializable decodes both arrays back to back")
    func rawArrayPair() {
        roundTrip(Calibration(rawValue1: [0x0102, 0xFFFF], rawValue2: [-1, 0, 127])!, [2, 1, 0xFF, 0xFF, 0xFF, 0, 0x7F])
        #expect(SerDe.deserialize(Data(count: 6), as: Calibration.self) == nil)
        #expect(SerDe.deserialize(Data(count: 8), as: Calibration.self) == nil)
        #expect(Calibration.encodedSize == 7)
    }

    @Test("ByteReader reports the offset it needed and rejects trailing bytes")
    func byteReader() throws {
        var reader = ByteReader(Data([1, 2, 3]), for: Triple.self)
        #expect(try reader.read(UInt16.self) == 0x0201)
        #expect(throws: SerDeError.wrongLength(type: "Triple", expected: 4, actual: 3, atLeast: true)) { try reader.read(UInt16.self) }
        #expect(throws: SerDeError.wrongLength(type: "Triple", expected: 2, actual: 3, atLeast: false)) { try reader.expectEnd() }
        #expect(reader.readRemaining() == Data([3]))
        try reader.expectEnd()
    }
}
