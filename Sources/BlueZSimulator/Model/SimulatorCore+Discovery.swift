// SimulatorCore+Discovery: Adapter1 discovery sessions per client, merged filters, device reports.

// MARK: - Discovery

extension SimulatorCore {
    /// `Adapter1.SetDiscoveryFilter(a{sv})` from `sender`; nil clears the client's filter.
    public func setDiscoveryFilter(adapter index: Int, sender: String, filter: DiscoveryFilter?) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        guard a.powered else { throw .notReady }
        let filter = try filter?.validated()
        if var client = a.discoveryClients[sender] {
            client.filter = filter
            if client.active || filter != nil {
                a.discoveryClients[sender] = client
            } else {
                a.discoveryClients[sender] = nil
            }
            if client.active { scan(a) }
        } else if let filter {
            a.discoveryClients[sender] = .init(filter: filter, active: false)
        }
    }

    /// `Adapter1.StartDiscovery()`: one session per client; Discovering turns true with the first.
    public func startDiscovery(adapter index: Int, sender: String) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        guard a.powered else { throw .notReady }
        if a.discoveryClients[sender]?.active == true { throw .busy }
        a.discoveryClients[sender, default: .init(filter: nil, active: false)].active = true
        updateDiscovering(a)
        scan(a)
    }

    /// `Adapter1.StopDiscovery()`: ends the caller's session (and its filter).
    public func stopDiscovery(adapter index: Int, sender: String) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        guard a.powered else { throw .notReady }
        guard a.discoveryClients[sender]?.active == true else { throw .failed("No discovery started") }
        a.discoveryClients[sender] = nil
        updateDiscovering(a)
    }

    /// A bus client left: its discovery sessions and filters end (bluetoothd's disconnect watch),
    /// its notification sessions stop, its applications and advertisements are dropped.
    public func clientVanished(_ name: String) {
        dropMonitors(owner: name)
        for a in adapters.values.sorted(by: { $0.index < $1.index }) {
            if a.discoveryClients.removeValue(forKey: name) != nil { updateDiscovering(a) }
            for device in a.devices.values {
                for (handle, var senders) in device.notifySessions where senders.contains(name) {
                    senders.remove(name)
                    device.notifySessions[handle] = senders
                    notifySessionsChanged(device, valueHandle: handle)
                }
            }
            for key in a.applications.keys where key.owner == name { _ = try? unregisterApplication(adapter: a.index, owner: name, root: key.path) }
            for key in a.advertisements.keys where key.owner == name { _ = try? unregisterAdvertisement(adapter: a.index, owner: name, path: key.path, release: false) }
        }
    }

    /// The filters currently set by clients of `adapter` (for tests and diagnostics).
    public func discoveryClients(adapter index: Int) -> [String: (filter: DiscoveryFilter?, active: Bool)] {
        adapters[index]?.discoveryClients.mapValues { ($0.filter, $0.active) } ?? [:]
    }

    func updateDiscovering(_ a: AdapterState) {
        let now = a.powered && a.discoveryClients.values.contains(where: \.active)
        guard now != a.discovering else { return }
        a.discovering = now
        store.set(a.path, "org.bluez.Adapter1", "Discovering", .bool(now))
        if !now { discoveryEnded(a) }
    }

    /// bluetoothd's discovery_cleanup: RSSI/TxPower invalidated; temporary non-connectable
    /// devices removed; temporary connectable ones removed after the temporary timeout.
    private func discoveryEnded(_ a: AdapterState) {
        for device in a.devices.values.sorted(by: { $0.address < $1.address }) where !device.isCentralMirror {
            store.update(device.path, "org.bluez.Device1", ["RSSI": nil, "TxPower": nil])
            guard device.link == .disconnected, store.property(device.path, "org.bluez.Device1", "Paired") == .bool(false) else { continue }
            if device.peer?.advertisement?.connectable == false {
                forget(device)
            } else {
                armTemporaryRemoval(device)
            }
        }
    }

    /// bluetoothd's temporary timer (`TemporaryTimeout`, ``temporaryDeviceTimeout``): a device
    /// neither paired nor trusted that is not connected when it passes is removed, unless a
    /// discovery runs on its adapter then (bluetoothd restarts the timer each time a discovery
    /// hears it; the discovery's end arms it again). Armed when a discovery ends and when the
    /// link of such a device drops: bluetoothd (5.55 to 5.82) ends the "bonding attempt" of a
    /// disconnected device with status 0x0e, and device_bonding_failed makes a device that is
    /// neither paired nor trusted temporary again.
    func armTemporaryRemoval(_ device: DeviceState) {
        guard let timeout = temporaryDeviceTimeout else { return }
        device.temporaryWork?.cancel()
        device.temporaryWork = clock.schedule(after: timeout) { [weak self, weak device] in
            guard let self, let device, device.link == .disconnected, !self.isPaired(device.path),
                  self.store.property(device.path, "org.bluez.Device1", "Trusted") != .bool(true),
                  self.adapters[device.adapter]?.discovering != true else { return }
            self.forget(device)
        }
    }

    // MARK: Reports

    /// Every peer `adapter` can hear right now.
    func peersInRange(of a: AdapterState) -> [RemotePeer] {
        var result: [RemotePeer] = peripherals.values.filter { $0.range?.contains(a.index) ?? true }
            .map(\.peer).sorted { $0.address < $1.address }
        for (index, peer) in adapterPeers.sorted(by: { $0.key < $1.key }) where index != a.index {
            result.append(peer)
        }
        return result
    }

    /// Reports every peer in range (a scan window).
    func scan(_ a: AdapterState) {
        for peer in peersInRange(of: a) { report(peer, to: a) }
    }

    /// Reports one peer to every adapter that hears it.
    func reportEverywhere(_ peer: RemotePeer, range: Set<Int>?) {
        for a in adapters.values.sorted(by: { $0.index < $1.index }) where range?.contains(a.index) ?? true {
            report(peer, to: a)
        }
    }

    /// One advertising report of `peer` received by `a`: creates the Device1 (InterfacesAdded)
    /// or updates it (PropertiesChanged), when discovering and the merged filter matches.
    func report(_ peer: RemotePeer, to a: AdapterState, force: Bool = false) {
        monitorHeard(peer, by: a)
        guard a.discovering, let ad = peer.advertisement, ad.address != a.address, a.matchesMergedFilter(ad) else { return }
        // A bonded privacy peer's private address resolves (its IRK) to its bonded device.
        let key = peer.identity.flatMap { a.bondedIdentities[$0] } ?? ad.address
        if let device = a.devices[key] {
            device.peer = peer
            device.temporaryWork?.cancel()
            updateDevice(device, with: ad, in: a, force: force)
        } else {
            let device = DeviceState(adapter: a.index, address: key)
            device.peer = peer
            a.devices[key] = device
            store.add(device.path, ["org.bluez.Device1": deviceProperties(device, ad: ad, adapter: a)])
        }
    }

    func deviceProperties(_ d: DeviceState, ad: AdvertisementSnapshot?, adapter a: AdapterState) -> [String: PropertyValue] {
        var p: [String: PropertyValue] = [
            "Address": .string(d.address),
            "AddressType": .string(ad?.addressType ?? "public"),
            "Alias": .string(ad?.name ?? d.address.split(separator: ":").joined(separator: "-")),
            "Paired": .bool(false), "Bonded": .bool(false), "Trusted": .bool(false), "Blocked": .bool(false),
            "LegacyPairing": .bool(false), "Connected": .bool(d.connected), "ServicesResolved": .bool(d.servicesResolved),
            "UUIDs": .strings((ad?.uuids ?? []).sorted()),
            "Adapter": .objectPath(a.path),
        ]
        if !profile.deviceBonded { p["Bonded"] = nil }
        if let ad {
            if let name = ad.name { p["Name"] = .string(name) }
            if a.discovering { p["RSSI"] = .int16(ad.rssi &+ a.rssiOffset) }
            if let tx = ad.txPower, a.discovering { p["TxPower"] = .int16(tx) }
            if !ad.manufacturerData.isEmpty { p["ManufacturerData"] = .manufacturerData(ad.manufacturerData) }
            if !ad.serviceData.isEmpty { p["ServiceData"] = .serviceData(ad.serviceData) }
            if let ap = ad.appearance { p["Appearance"] = .uint16(ap) }
            if profile.exportsDeviceAdvertisingData {
                if let flags = ad.flags { p["AdvertisingFlags"] = .bytes([flags]) }
                if !ad.otherADStructures.isEmpty { p["AdvertisingData"] = .adStructures(ad.otherADStructures) }
            }
        }
        return p
    }

    private func updateDevice(_ d: DeviceState, with ad: AdvertisementSnapshot, in a: AdapterState, force: Bool) {
        var changes: [String: PropertyValue?] = [:]
        let current = store.properties(d.path, "org.bluez.Device1") ?? [:]
        let rssi = ad.rssi &+ a.rssiOffset
        if let old = current["RSSI"]?.int16Value {
            let delta = abs(Int(rssi) - Int(old))
            if delta > 0 && (delta >= a.rssiDeltaThreshold || force) { changes["RSSI"] = .int16(rssi) }
        } else {
            changes["RSSI"] = .int16(rssi)
        }
        if let tx = ad.txPower { changes["TxPower"] = .int16(tx) }
        if let name = ad.name {
            changes["Name"] = .string(name)
            if current["Alias"] == .string(d.address.split(separator: ":").joined(separator: "-")) { changes["Alias"] = .string(name) }
        }
        if !d.servicesResolved {
            let merged = Set(current["UUIDs"].flatMap { if case .strings(let s) = $0 { s } else { nil } } ?? []).union(ad.uuids)
            changes["UUIDs"] = .strings(merged.sorted())
        }
        if !ad.manufacturerData.isEmpty { changes["ManufacturerData"] = .manufacturerData(ad.manufacturerData) }
        if !ad.serviceData.isEmpty { changes["ServiceData"] = .serviceData(ad.serviceData) }
        if profile.exportsDeviceAdvertisingData {
            // bluetoothd's device_set_flags announces a change of flags; its add_data announces
            // AdvertisingData only when Transport Discovery Data (0x26) is added.
            if let flags = ad.flags { changes["AdvertisingFlags"] = .bytes([flags]) }
            if !ad.otherADStructures.isEmpty {
                var merged: [UInt8: [UInt8]] = [:]
                if case .adStructures(let m)? = current["AdvertisingData"] { merged = m }
                merged.merge(ad.otherADStructures) { _, new in new }
                if ad.otherADStructures[0x26] != nil || current["AdvertisingData"] == nil { changes["AdvertisingData"] = .adStructures(merged) }
            }
        }
        store.update(d.path, "org.bluez.Device1", changes)
        if a.duplicateData {
            var dup: [String: PropertyValue?] = [:]
            if !ad.manufacturerData.isEmpty { dup["ManufacturerData"] = .manufacturerData(ad.manufacturerData) }
            if !ad.serviceData.isEmpty { dup["ServiceData"] = .serviceData(ad.serviceData) }
            if !dup.isEmpty && changes["ManufacturerData"] == nil && changes["ServiceData"] == nil {
                store.update(d.path, "org.bluez.Device1", dup, force: true)
            }
        }
    }

    /// `Adapter1.RemoveDevice(o)`: disconnects and removes the device object.
    public func removeDevice(adapter index: Int, path: String) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        guard let device = a.devices.values.first(where: { $0.path == path }) else { throw .doesNotExist }
        guard a.powered else { throw .notReady }
        if device.link != .disconnected { linkLost(device, reason: .failed("le-connection-abort-by-local")) }
        forget(device)
    }

    /// Removes a device object and its GATT objects without any link procedure.
    func forget(_ device: DeviceState) {
        device.temporaryWork?.cancel()
        device.connectWork?.cancel()
        unpublishGatt(device)
        adapters[device.adapter]?.devices[device.address] = nil
        adapters[device.adapter]?.bondedIdentities = adapters[device.adapter]?.bondedIdentities.filter { $0.value != device.address } ?? [:]
        store.removeSubtree(device.path, including: true)
    }
}
