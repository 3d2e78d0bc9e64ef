// Advertisement+ADStructures: the AD structures an advertisement stands for, raw where BlueZ
// kept them raw and re-encoded from its decoded properties otherwise; also what monitor
// patterns are matched against on our side (the active-scanning fallback).
import Foundation

extension Advertisement {
    // MARK: AD structures

    /// Every AD structure the advertisement stands for, AD type → the data of each structure of
    /// that type (without the length and type bytes), e.g. `adStructures[0x16]` for the service
    /// data of 16-bit UUIDs (BTHome, Xiaomi) or `adStructures[0xFF]` for manufacturer data (Ruuvi).
    ///
    /// The types in ``advertisingData`` (`org.bluez.Device1.AdvertisingData`) are given as
    /// bluetoothd received them. The others are re-encoded from the properties bluetoothd decoded
    /// them into: 0x01 flags (`AdvertisingFlags`), 0x03 and 0x07 complete UUID lists
    /// (`UUIDs`, 16-bit and 128-bit, little-endian), 0x09 complete local name (`Name`), 0x0A TX
    /// power (`TxPower`), 0x16 and 0x21 service data (`ServiceData`, UUID little-endian then the
    /// payload), 0x19 appearance (`Appearance`) and 0xFF manufacturer data (`ManufacturerData`,
    /// company identifier little-endian then the payload). Re-encoded structures follow BlueZ's
    /// view: the list types are "complete" whatever the air said, a UUID list holds the resolved
    /// services' UUIDs once connected, and entries are sorted (by company identifier, by UUID),
    /// not in air order.
    public var adStructures: [UInt8: [Data]] {
        var result: [UInt8: [Data]] = [:]
        func add(_ type: UInt8, _ bytes: [UInt8]) { result[type, default: []].append(Data(bytes)) }
        if let flags { add(0x01, [flags.rawValue]) }
        let short = serviceUUIDs.compactMap(\.shortValue)
        if !short.isEmpty { add(0x03, short.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }) }
        let long = serviceUUIDs.filter { $0.shortValue == nil }
        if !long.isEmpty { add(0x07, long.flatMap { $0.bigEndianBytes.reversed() }) }
        if let localName { add(0x09, Array(localName.utf8)) }
        if let txPower { add(0x0A, [UInt8(bitPattern: Int8(clamping: txPower))]) }
        for (uuid, payload) in serviceData.sorted(by: { $0.key < $1.key }) {
            if let short = uuid.shortValue {
                add(0x16, [UInt8(short & 0xFF), UInt8(short >> 8)] + [UInt8](payload))
            } else {
                add(0x21, uuid.bigEndianBytes.reversed() + [UInt8](payload))
            }
        }
        if let appearance { add(0x19, [UInt8(appearance & 0xFF), UInt8(appearance >> 8)]) }
        for (id, payload) in manufacturerData.sorted(by: { $0.key < $1.key }) {
            add(0xFF, [UInt8(id & 0xFF), UInt8(id >> 8)] + [UInt8](payload))
        }
        // What bluetoothd kept raw is as received: it replaces nothing above (bluetoothd never
        // keeps a decoded type raw), and wins should a simulated or future bluetoothd do so.
        for (type, data) in advertisingData ?? [:] { result[type] = [data] }
        return result
    }

    // MARK: Monitor patterns

    /// Whether any of `patterns` matches one of the AD structures.
    func matches(any patterns: [MonitorPattern]) -> Bool {
        let structures = adStructures.flatMap { entry in entry.value.map { (type: entry.key, data: [UInt8]($0)) } }
        return patterns.contains { p in structures.contains { p.bluez.matches(type: $0.type, data: $0.data) } }
    }
}
