// LocalAdvertisement+Validation: the checks bluetoothd makes before RegisterAdvertisement,
// made first, each naming the limit it hit.

import BlueZ
import Foundation

// MARK: - Sizes

extension LocalAdvertisement {
    /// The bytes of advertising data bluetoothd builds from this advertisement (each AD structure
    /// is a length byte, a type byte and its data): flags (3, when discoverable), `tx-power` (3),
    /// appearance (4; 8 with the `appearance` include, as bluetoothd reserves the kernel's
    /// copy), the service and solicit UUID lists (one list per UUID size), service data,
    /// manufacturer data and `Data`. The local name is not counted: it goes into the scan
    /// response (into the advertising data for a connectable advertisement on a secondary
    /// channel, where extended advertising has no scan response), and bluetoothd shortens it to
    /// what is left (Shortened Local Name, AD 0x08), so it never makes an advertisement too long.
    /// Not counted either: the 3 bytes of flags the kernel adds to a connectable advertisement
    /// without `discoverable` while the adapter itself is discoverable (`Adapter1.Discoverable`).
    public var advertisingDataLength: Int {
        var n = 0
        if discoverable == true || discoverableTimeout != nil { n += 3 }
        if includes.contains("tx-power") { n += 3 }
        if appearance != nil || includes.contains("appearance") { n += 4 }
        // The `appearance` include: bluetoothd adds the structure and also keeps 4 bytes for the
        // kernel's (`calc_max_adv_len`).
        if includes.contains("appearance") { n += 4 }
        n += Self.uuidListsLength(serviceUUIDs) + Self.uuidListsLength(solicitUUIDs)
        for (uuid, value) in serviceData { n += 2 + Self.uuidSize(uuid) + value.count }
        for value in manufacturerData.values { n += 4 + value.count }
        for value in data.values { n += 2 + value.count }
        return n
    }

    /// The bytes of scan response the local name asks for (2 + its UTF-8 bytes; 0 when it goes
    /// into the advertising data). bluetoothd shortens a name longer than the scan response
    /// holds (31 bytes legacy) to a Shortened Local Name: more is not refused, it is cut.
    public var scanResponseLength: Int {
        guard let localName, !localName.isEmpty, !(type == .peripheral && secondaryChannel != nil) else { return 0 }
        return 2 + localName.utf8.count
    }

    /// 2, 4 or 16: the bytes a UUID takes on the air (16 for a string that is no UUID).
    static func uuidSize(_ string: String) -> Int {
        guard let uuid = BLEUUID(string: string) else { return 16 }
        if uuid.shortValue != nil { return 2 }
        return uuid.value32 != nil ? 4 : 16
    }

    /// One AD structure per UUID size present.
    static func uuidListsLength(_ uuids: [String]) -> Int {
        let sizes = uuids.map(uuidSize)
        return [2, 4, 16].reduce(0) { total, size in
            let count = sizes.filter { $0 == size }.count
            return count == 0 ? total : total + 2 + size * count
        }
    }
}

// MARK: - Validation

extension LocalAdvertisement {
    /// The shortest and longest advertising interval, in milliseconds (0x20 and 0xFFFFFF units
    /// of 0.625 ms: Core 5.2, Vol 4, Part E, 7.8.53).
    public static let intervalRange: ClosedRange<UInt32> = 20...10_485_759

    /// Checks the advertisement against what bluetoothd checks and what `capabilities` say
    /// (nil: the 31-byte legacy limits and no instance count); throws ``BlueCapError`` with kind
    /// `.invalidArguments` (or `.notPermitted` for instances) naming the limit and the fix.
    public func validate(against capabilities: AdvertisingCapabilities? = nil,
                         operation: String = "LocalAdvertisement.validate") throws(BlueCapError) {
        func fail(_ message: String, _ kind: BlueCapError.Kind = .invalidArguments) -> BlueCapError {
            BlueCapError(kind: kind, operation: operation, message: message)
        }
        let caps = capabilities ?? AdvertisingCapabilities()
        let adLimit = caps.advertisingDataLimit, adLength = advertisingDataLength
        let source = caps.maxAdvertisingDataLength == nil ? "the legacy limit (the adapter reports no MaxAdvLen)"
            : "the controller's MaxAdvLen"
        guard adLength <= adLimit else {
            throw fail("advertising data is \(adLength) bytes, over \(source) of \(adLimit) bytes: "
                       + "advertise fewer UUIDs or shorter data, drop \"tx-power\" from includes, or move the name to the scan response")
        }
        if type == .broadcast, discoverable == true {
            throw fail("a broadcast advertisement cannot be discoverable (bluetoothd: \"Broadcast cannot set flags\", Core Vol 3 Part C 9.2): "
                       + "set discoverable to nil, or advertise as .peripheral")
        }
        if discoverableTimeout != nil, discoverable != true {
            throw fail("DiscoverableTimeout is set but Discoverable is not true: bluetoothd would ignore the timeout; set discoverable")
        }
        if let timeout, let discoverableTimeout, timeout > 0, discoverableTimeout > timeout {
            throw fail("DiscoverableTimeout (\(discoverableTimeout) s) is longer than Timeout (\(timeout) s): bluetoothd refuses it")
        }
        for (name, value) in [("MinInterval", minInterval), ("MaxInterval", maxInterval)] {
            if let value, !Self.intervalRange.contains(value) {
                throw fail("\(name) \(value) ms is outside \(Self.intervalRange.lowerBound)…\(Self.intervalRange.upperBound) ms "
                           + "(0x20…0xFFFFFF units of 0.625 ms)")
            }
        }
        if (minInterval == nil) != (maxInterval == nil) {
            throw fail("only one of MinInterval and MaxInterval is set: bluetoothd needs both (min ≤ max)")
        }
        if let minInterval, let maxInterval, minInterval > maxInterval {
            throw fail("MinInterval (\(minInterval) ms) is above MaxInterval (\(maxInterval) ms): swap them")
        }
        if let txPower, !(-127...20).contains(txPower) {
            throw fail("TxPower \(txPower) dBm is outside -127…20 dBm")
        }
        if localName != nil, includes.contains("local-name") {
            throw fail("LocalName is set and includes has \"local-name\": bluetoothd refuses both (\"Local name already included\"); keep one")
        }
        if let supported = caps.supportedIncludes {
            for include in includes where !supported.contains(include) {
                throw fail("include \"\(include)\" is not in the adapter's SupportedIncludes \(supported)")
            }
        }
        if let secondaryChannel {
            let supported = caps.supportedSecondaryChannels ?? []
            guard supported.contains(secondaryChannel.rawValue) else {
                throw fail("SecondaryChannel \"\(secondaryChannel.rawValue)\" is not supported by the controller "
                           + "(SupportedSecondaryChannels: \(supported.isEmpty ? "none, no extended advertising" : supported.joined(separator: ", ")))",
                           .notSupported)
            }
        }
        if let free = caps.availableInstances, free == 0 {
            throw fail("every advertising instance is in use (\(caps.activeInstances.map(String.init) ?? "?") active of "
                       + "\(caps.totalInstances.map(String.init) ?? "?")): stop an advertisement first", .notPermitted)
        }
    }
}
