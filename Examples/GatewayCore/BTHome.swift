// BTHome: the readings of BTHome v2 service data (UUID FCD2), the format many DIY and commercial
// sensors advertise.

import ExampleSupport
import Foundation

/// Decodes unencrypted BTHome v2 service data: a device-information byte (version 2 in bits
/// 5–7, bit 0 set when encrypted), then objects of an id and a little-endian value whose size
/// and scale the id fixes. Decoding stops at the first id it does not know (its size is unknown).
package enum BTHome {
    /// The BTHome service-data UUID.
    package static let uuid = "FCD2"

    /// id → (name, bytes, signed, factor).
    private static let objects: [UInt8: (String, Int, Bool, Double)] = [
        0x00: ("packet", 1, false, 1), 0x01: ("battery", 1, false, 1), 0x02: ("temperature", 2, true, 0.01),
        0x03: ("humidity", 2, false, 0.01), 0x04: ("pressure", 3, false, 0.01), 0x05: ("illuminance", 3, false, 0.01),
        0x08: ("dewpoint", 2, true, 0.01), 0x0C: ("voltage", 2, false, 0.001), 0x12: ("co2", 2, false, 1),
        0x2E: ("humidity", 1, false, 1), 0x2F: ("moisture", 1, false, 1), 0x45: ("temperature", 2, true, 0.1),
    ]

    /// The readings as a JSON object, nil when the data is not unencrypted BTHome v2.
    package static func decode(_ data: Data) -> JSON? {
        let bytes = [UInt8](data)
        guard let info = bytes.first, info & 0x01 == 0, info >> 5 == 2 else { return nil }
        var fields: [(String, JSON)] = []
        var i = 1
        while i < bytes.count, let (name, size, signed, factor) = objects[bytes[i]] {
            guard i + 1 + size <= bytes.count else { break }
            var raw: Int64 = 0
            for k in 0..<size { raw |= Int64(bytes[i + 1 + k]) << (8 * k) }
            if signed && raw & (1 << (8 * size - 1)) != 0 { raw -= 1 << (8 * size) }
            let value = Double(raw) * factor
            fields.removeAll { $0.0 == name }
            fields.append((name, factor == 1 ? .integer(Int(raw)) : .number((value * 1000).rounded() / 1000)))
            i += 1 + size
        }
        return .object(fields)
    }

    /// BTHome v2 bytes for a temperature (°C) and a humidity (%), as a simulated sensor sends them.
    package static func encode(temperature: Double, humidity: Double, battery: UInt8) -> Data {
        let t = Int16((temperature * 100).rounded())
        let h = UInt16((humidity * 100).rounded())
        return Data([0x40, 0x01, battery, 0x02, UInt8(truncatingIfNeeded: t), UInt8(truncatingIfNeeded: t >> 8),
                     0x03, UInt8(truncatingIfNeeded: h), UInt8(truncatingIfNeeded: h >> 8)])
    }
}
