// SimulatorCore+AdvertisementChecks: what bluetoothd's parse_advertisement and
// refresh_advertisement refuse (src/advertising.c), answered as it does: "Failed to parse
// advertisement.".

// MARK: - Checks

extension SimulatorCore {
    /// Applies the profile (5.55 and 5.66 without `--experimental` ignore MinInterval,
    /// MaxInterval and TxPower) and throws `Failed` where bluetoothd would: the local name both
    /// set and included, an unknown include or secondary channel, intervals out of
    /// 0x20…0xFFFFFF units or min above max, TxPower outside -127…20, DiscoverableTimeout above
    /// Timeout, a discoverable broadcast, advertising data over `MaxAdvLen` (less 3 for flags and
    /// TX power, 4 for appearance, as `calc_max_adv_len`). A long name is no failure: bluetoothd
    /// shortens it to fit.
    func checkedAdvertisement(_ given: LEAdvertisementData) throws(BlueZErrorReply) -> LEAdvertisementData {
        let failed = BlueZErrorReply.failed("Failed to parse advertisement.")
        var ad = given
        if !profile.readsAdvertisementIntervals {
            ad.minInterval = nil
            ad.maxInterval = nil
            ad.txPower = nil
        }
        if ad.localName != nil, ad.includes.contains("local-name") { throw failed }
        for include in ad.includes where !["tx-power", "appearance", "local-name"].contains(include) { throw failed }
        if let channel = ad.secondaryChannel, !supportedSecondaryChannels.contains(channel) { throw failed }
        for interval in [ad.minInterval, ad.maxInterval].compactMap({ $0 }) {
            let units = Double(interval) / 0.625
            if units < 0x20 || units > 0xFF_FFFF { throw failed }
        }
        if profile.readsAdvertisementIntervals, (ad.minInterval ?? 0) > (ad.maxInterval ?? 0) { throw failed }
        if let tx = ad.txPower, !(-127...20).contains(tx) { throw failed }
        if ad.discoverable != true { ad.discoverableTimeout = nil }
        if let timeout = ad.timeout, timeout > 0, (ad.discoverableTimeout ?? 0) > timeout { throw failed }
        // "Broadcast cannot set flags" (5.55 to 5.82).
        if ad.type == "broadcast", ad.discoverable == true { throw failed }
        if Self.advertisingDataLength(ad) > Int(maxAdvertisingDataLength) { throw failed }
        return ad
    }

    // MARK: Sizes

    /// The AD structures bluetoothd builds itself plus what `calc_max_adv_len` reserves.
    static func advertisingDataLength(_ ad: LEAdvertisementData) -> Int {
        var n = 0
        if ad.discoverable == true { n += 3 }
        if ad.includes.contains("tx-power") { n += 3 }
        if ad.appearance != nil || ad.includes.contains("appearance") { n += 4 }
        if ad.includes.contains("appearance") { n += 4 }
        n += uuidListsLength(ad.serviceUUIDs) + uuidListsLength(ad.solicitUUIDs)
        for (uuid, value) in ad.serviceData { n += 2 + uuidSize(uuid) + value.count }
        for value in ad.manufacturerData.values { n += 4 + value.count }
        for value in ad.data.values { n += 2 + value.count }
        return n
    }

    /// 2 for a UUID on the Bluetooth base with a 16-bit value, 4 for 32-bit, else 16
    /// (`uuid` normalized: 36 lowercase characters).
    static func uuidSize(_ uuid: String) -> Int {
        guard uuid.hasSuffix("-0000-1000-8000-00805f9b34fb") else { return 16 }
        return uuid.hasPrefix("0000") ? 2 : 4
    }

    static func uuidListsLength(_ uuids: [String]) -> Int {
        let sizes = uuids.map(uuidSize)
        return [2, 4, 16].reduce(0) { total, size in
            let count = sizes.filter { $0 == size }.count
            return count == 0 ? total : total + 2 + size * count
        }
    }
}

// MARK: - The controller

extension SimulatorCore {
    /// Sets what the controllers can advertise (nil: unchanged) and republishes every adapter's
    /// `LEAdvertisingManager1` properties: instances, `MaxAdvLen`/`MaxScnRspLen`,
    /// `SupportedSecondaryChannels`.
    public func setAdvertisingController(instances: UInt8? = nil, maxDataLength: UInt8? = nil, secondaryChannels: [String]? = nil) {
        if let instances { supportedAdvertisingInstances = instances }
        if let maxDataLength { maxAdvertisingDataLength = maxDataLength }
        if let secondaryChannels { supportedSecondaryChannels = secondaryChannels }
        for a in adapters.values {
            var values: [String: PropertyValue?] = advertisingManagerProperties(a).mapValues { $0 }
            if supportedSecondaryChannels.isEmpty { values["SupportedSecondaryChannels"] = .some(nil) }
            store.update(a.path, "org.bluez.LEAdvertisingManager1", values)
        }
    }
}
