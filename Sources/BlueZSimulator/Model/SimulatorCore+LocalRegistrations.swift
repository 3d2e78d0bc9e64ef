// SimulatorCore+LocalRegistrations: the application/advertisement registrations of the peripheral role
// (GattManager1, LEAdvertisingManager1) that feed the virtual radio.

// MARK: - Peripheral role

extension SimulatorCore {
    func adapterPeer(_ index: Int) -> AdapterPeer {
        if let p = adapterPeers[index] { return p }
        let p = AdapterPeer(index: index, core: self)
        adapterPeers[index] = p
        return p
    }

    /// `GattManager1.RegisterApplication(o, a{sv})`, after the face read the app's objects.
    public func registerApplication(adapter index: Int, _ app: LocalApplication) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        let key = AdvertisementKey(owner: app.owner, path: app.root)
        guard a.applications[key] == nil else { throw .alreadyExists }
        guard !app.services.isEmpty else { throw .invalidArguments("No object received") }
        a.applications[key] = app
        adapterPeer(index).applicationsChanged()
        store.set(a.path, "org.bluez.Adapter1", "UUIDs", .strings(adapterUUIDs(a)))
    }

    /// `GattManager1.UnregisterApplication(o)`.
    public func unregisterApplication(adapter index: Int, owner: String, root: String) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        guard a.applications.removeValue(forKey: AdvertisementKey(owner: owner, path: root)) != nil else { throw .doesNotExist }
        adapterPeer(index).applicationsChanged()
        store.set(a.path, "org.bluez.Adapter1", "UUIDs", .strings(adapterUUIDs(a)))
    }

    /// `LEAdvertisingManager1.RegisterAdvertisement(o, a{sv})`, after the face read its properties.
    public func registerAdvertisement(adapter index: Int, owner: String, path: String, _ ad: LEAdvertisementData) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        guard a.powered else { throw .notReady }
        let key = AdvertisementKey(owner: owner, path: path)
        guard a.advertisements[key] == nil else { throw .alreadyExists }
        guard ad.type == "peripheral" || ad.type == "broadcast" else { throw .invalidArguments }
        guard a.advertisements.count < Int(supportedAdvertisingInstances) else { throw .notPermitted("Maximum advertisements reached") }
        a.advertisements[key] = try checkedAdvertisement(ad)
        store.update(a.path, "org.bluez.LEAdvertisingManager1", advertisingManagerProperties(a).mapValues { $0 })
        adapterPeer(index).advertisingChanged()
    }

    /// `LEAdvertisingManager1.UnregisterAdvertisement(o)`; `release` calls the object's Release().
    public func unregisterAdvertisement(adapter index: Int, owner: String, path: String, release: Bool) throws(BlueZErrorReply) {
        guard let a = adapters[index] else { throw .doesNotExist }
        guard a.advertisements.removeValue(forKey: AdvertisementKey(owner: owner, path: path)) != nil else { throw .doesNotExist }
        if release { bridge?.releaseAdvertisement(owner: owner, path: path) }
        store.update(a.path, "org.bluez.LEAdvertisingManager1", advertisingManagerProperties(a).mapValues { $0 })
    }

    /// An application characteristic's Value changed (its PropertiesChanged): a notification
    /// to every central subscribed to it through the virtual radio.
    public func applicationValueChanged(owner: String, path: String, value: [UInt8]) {
        for (_, peer) in adapterPeers {
            guard let vh = peer.valueHandle(owner: owner, path: path) else { continue }
            deliverNotification(from: peer, valueHandle: vh, value: value)
        }
    }

    /// Whether `owner` has an application or advertisement registered anywhere.
    public func hasRegistrations(owner: String) -> Bool {
        adapters.values.contains { a in
            a.applications.keys.contains { $0.owner == owner } || a.advertisements.keys.contains { $0.owner == owner }
        }
    }
}
