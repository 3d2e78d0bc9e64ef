// Advertisement+ADStructures: the AD structures an advertisement's reported fields stand for,
// for matching monitor patterns on our side (the active-scanning fallback).
import Foundation

extension Advertisement {
    /// (AD type, data) for the fields BlueZ reports: manufacturer data (0xFF: company id
    /// little-endian, then the payload), service data (0x16 for 16-bit UUIDs, 0x21 for others),
    /// the service UUIDs as complete lists (0x03 16-bit, 0x07 128-bit, each little-endian) and the
    /// local name (0x09). Field order inside a list follows BlueZ's order, which may differ from the air.
    var adStructures: [(type: UInt8, data: [UInt8])] {
        var result: [(type: UInt8, data: [UInt8])] = []
        for (id, payload) in manufacturerData.sorted(by: { $0.key < $1.key }) {
            result.append((0xFF, [UInt8(id & 0xFF), UInt8(id >> 8)] + [UInt8](payload)))
        }
        for (uuid, payload) in serviceData.sorted(by: { $0.key < $1.key }) {
            if let short = uuid.shortValue {
                result.append((0x16, [UInt8(short & 0xFF), UInt8(short >> 8)] + [UInt8](payload)))
            } else {
                result.append((0x21, uuid.bigEndianBytes.reversed() + [UInt8](payload)))
            }
        }
        let short = serviceUUIDs.compactMap(\.shortValue)
        if !short.isEmpty { result.append((0x03, short.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })) }
        let long = serviceUUIDs.filter { $0.shortValue == nil }
        if !long.isEmpty { result.append((0x07, long.flatMap { $0.bigEndianBytes.reversed() })) }
        if let localName { result.append((0x09, Array(localName.utf8))) }
        return result
    }

    /// Whether any of `patterns` matches one of the AD structures.
    func matches(any patterns: [MonitorPattern]) -> Bool {
        let structures = adStructures
        return patterns.contains { p in structures.contains { p.bluez.matches(type: $0.type, data: $0.data) } }
    }
}
