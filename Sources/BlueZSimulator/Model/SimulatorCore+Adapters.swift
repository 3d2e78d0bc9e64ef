// SimulatorCore+Adapters: bring-up of /org/bluez and the adapters, adapters plugged in and
// unplugged, Adapter1 properties and power.

// MARK: - Adapters

extension SimulatorCore {
    // MARK: Bring-up

    /// Publishes `/org/bluez` and `count` adapters hci0…hci(count-1), powered.
    public func start(adapters count: Int) {
        store.add(BlueZPath.root, [
            "org.bluez.AgentManager1": [:],
            "org.bluez.ProfileManager1": [:],
        ])
        for _ in 0..<count { _ = addAdapter() }
    }

    /// Adds the next adapter (hciN with the lowest free N); returns N. Fault: "adapter plugged in".
    /// `address` (default: derived from N) lets a test plug a controller back under another index,
    /// as the kernel does when a USB dongle returns while another took its old number.
    @discardableResult
    public func addAdapter(address: String? = nil) -> Int {
        var index = 0
        while adapters[index] != nil { index += 1 }
        let adapter = AdapterState(index: index, name: "bluez-sim #\(index)", address: address?.uppercased())
        adapters[index] = adapter
        store.add(adapter.path, adapterInterfaces(adapter))
        return index
    }

    /// Removes adapter `index` with its devices (InterfacesRemoved of the devices, then of hciN).
    /// Fault: "adapter unplugged".
    public func removeAdapter(_ index: Int) {
        guard let adapter = adapters[index] else { return }
        setPowered(index, false)
        for device in adapter.devices.values { forget(device) }
        adapterPeers[index] = nil
        dropMonitors(adapter: index)
        adapters[index] = nil
        store.removeSubtree(adapter.path, including: true)
    }

    /// The adapters' indexes.
    public var adapterIndexes: [Int] { adapters.keys.sorted() }

    /// The address of adapter `index`.
    public func adapterAddress(_ index: Int) -> String? { adapters[index]?.address }

    // MARK: Adapter properties

    func adapterInterfaces(_ a: AdapterState) -> InterfaceMap {
        var map: InterfaceMap = [
            "org.bluez.Adapter1": [
                "Address": .string(a.address),
                "AddressType": .string("public"),
                "Name": .string(a.systemName),
                "Alias": .string(a.alias ?? a.systemName),
                "Class": .uint32(0x000000),
                "Powered": .bool(a.powered),
                "Discoverable": .bool(a.discoverable),
                "DiscoverableTimeout": .uint32(a.discoverableTimeout),
                "Pairable": .bool(a.pairable),
                "PairableTimeout": .uint32(0),
                "Discovering": .bool(a.discovering),
                "UUIDs": .strings(adapterUUIDs(a)),
                "Modalias": .string("usb:v1D6Bp0246d054F"),
                "Roles": .strings(["central", "peripheral"]),
            ],
            "org.bluez.GattManager1": [:],
            "org.bluez.LEAdvertisingManager1": advertisingManagerProperties(a),
        ]
        if profile.exportsPowerState { map["org.bluez.Adapter1"]?["PowerState"] = .string(a.powered ? "on" : "off") }
        if profile.adapterConnectable { map["org.bluez.Adapter1"]?["Connectable"] = .bool(true) }
        if profile.adapterManufacturerAndVersion {
            // Linux Foundation's company identifier; core version code 0x0C (Bluetooth 5.3).
            map["org.bluez.Adapter1"]?["Manufacturer"] = .uint16(0x05F1)
            map["org.bluez.Adapter1"]?["Version"] = .byte(0x0C)
        }
        if profile.exportsExperimentalFeatures { map["org.bluez.Adapter1"]?["ExperimentalFeatures"] = .strings(profile.experimentalFeatures) }
        if profile.exportsAdvertisementMonitorManager { map["org.bluez.AdvertisementMonitorManager1"] = monitorManagerProperties }
        return map
    }

    /// `LEAdvertisingManager1`'s properties: `SupportedSecondaryChannels` only when the
    /// controller has some (bluetoothd's `secondary_exists`), `SupportedFeatures` and
    /// `SupportedCapabilities` as the profile exports them.
    func advertisingManagerProperties(_ a: AdapterState) -> [String: PropertyValue] {
        var p: [String: PropertyValue] = [
            "ActiveInstances": .byte(UInt8(a.advertisements.count)),
            "SupportedInstances": .byte(supportedAdvertisingInstances - UInt8(min(Int(supportedAdvertisingInstances), a.advertisements.count))),
            "SupportedIncludes": .strings(["tx-power", "appearance", "local-name"]),
        ]
        if !supportedSecondaryChannels.isEmpty { p["SupportedSecondaryChannels"] = .strings(supportedSecondaryChannels) }
        if profile.exportsAdvertisingCapabilities {
            p["SupportedFeatures"] = .strings(supportedAdvertisingFeatures)
            p["SupportedCapabilities"] = .options([
                "MaxAdvLen": .byte(maxAdvertisingDataLength), "MaxScnRspLen": .byte(maxAdvertisingDataLength),
                "MinTxPower": .int16(-34), "MaxTxPower": .int16(10),
            ])
        }
        return p
    }

    func adapterUUIDs(_ a: AdapterState) -> [String] {
        var uuids = Set(["00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb"])
        for app in a.applications.values { for s in app.services where s.primary { uuids.insert(s.uuid) } }
        return uuids.sorted()
    }

    /// `org.freedesktop.DBus.Properties.Set` on Adapter1: Powered, Alias, Discoverable, Pairable.
    public func setAdapterProperty(_ index: Int, _ name: String, _ value: PropertyValue) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        switch (name, value) {
        case ("Powered", .bool(let on)): setPowered(index, on)
        case ("Alias", .string(let alias)):
            a.alias = alias.isEmpty ? nil : alias
            store.set(a.path, "org.bluez.Adapter1", "Alias", .string(a.alias ?? a.systemName))
        case ("Discoverable", .bool(let on)):
            guard a.powered else { throw .notReady }
            a.discoverable = on
            store.set(a.path, "org.bluez.Adapter1", "Discoverable", .bool(on))
            a.discoverableWork?.cancel()
            a.discoverableWork = nil
            if on, a.discoverableTimeout > 0 {
                a.discoverableWork = clock.schedule(after: .seconds(Int(a.discoverableTimeout))) { [weak self, weak a] in
                    guard let self, let a, a.discoverable else { return }
                    a.discoverable = false
                    self.store.set(a.path, "org.bluez.Adapter1", "Discoverable", .bool(false))
                }
            }
        case ("DiscoverableTimeout", .uint32(let seconds)):
            a.discoverableTimeout = seconds
            store.set(a.path, "org.bluez.Adapter1", "DiscoverableTimeout", .uint32(seconds))
        case ("Pairable", .bool(let on)):
            a.pairable = on
            store.set(a.path, "org.bluez.Adapter1", "Pairable", .bool(on))
        case ("Powered", _), ("Alias", _), ("Discoverable", _), ("Pairable", _), ("DiscoverableTimeout", _):
            throw .invalidArguments
        default:
            throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "Property '\(name)' is not writable")
        }
    }

    /// Powers adapter `index` on or off. Off: connected devices disconnect (BlueZ order),
    /// discovery sessions end (Discovering=false), advertisements are released.
    public func setPowered(_ index: Int, _ on: Bool) {
        guard let a = adapters[index], a.powered != on else { return }
        if !on {
            for device in a.devices.values where device.link != .disconnected {
                linkLost(device, reason: .failed("le-connection-abort-by-local"))
            }
            // Links where this adapter is the peripheral side.
            for other in adapters.values where other.index != index {
                for device in other.devices.values where device.peer === adapterPeers[index] && device.link != .disconnected {
                    linkLost(device, reason: .failed("le-connection-abort-by-remote"))
                }
            }
            for key in a.advertisements.keys.sorted(by: { $0.path < $1.path }) {
                bridge?.releaseAdvertisement(owner: key.owner, path: key.path)
            }
            a.advertisements.removeAll()
            adapterPeers[index]?.advertisingChanged()
            store.update(a.path, "org.bluez.LEAdvertisingManager1", advertisingManagerProperties(a).mapValues { $0 })
            a.discoveryClients.removeAll()
            a.discoverable = false
            a.discoverableWork?.cancel()
            a.discoverableWork = nil
        }
        a.powered = on
        var changed: [String: PropertyValue?] = ["Powered": .bool(on), "Discoverable": .bool(a.discoverable)]
        if profile.exportsPowerState { changed["PowerState"] = .string(on ? "on" : "off") }
        store.update(a.path, "org.bluez.Adapter1", changed)
        if !on { updateDiscovering(a) }
    }
}
