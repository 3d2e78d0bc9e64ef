// BlueZSimulator+Interfaces: the methods of every interface bluetoothd exports, with their
// signatures, routed through the fault plan onto the simulator's queue.

import DBus

// MARK: - Method tables

extension BlueZSimulator {
    /// (name, input, output) of each method, per interface.
    static let signatures: [String: [(String, DBusSignature, DBusSignature)]] = [
        "org.bluez.Adapter1": [
            ("StartDiscovery", "", ""), ("StopDiscovery", "", ""), ("RemoveDevice", "o", ""),
            ("SetDiscoveryFilter", "a{sv}", ""), ("GetDiscoveryFilters", "", "as"), ("ConnectDevice", "a{sv}", "o"),
        ],
        "org.bluez.GattManager1": [("RegisterApplication", "oa{sv}", ""), ("UnregisterApplication", "o", "")],
        "org.bluez.LEAdvertisingManager1": [("RegisterAdvertisement", "oa{sv}", ""), ("UnregisterAdvertisement", "o", "")],
        "org.bluez.Device1": [
            ("Connect", "", ""), ("Disconnect", "", ""), ("Pair", "", ""), ("CancelPairing", "", ""),
            ("ConnectProfile", "s", ""), ("DisconnectProfile", "s", ""),
        ],
        "org.bluez.GattCharacteristic1": [
            ("ReadValue", "a{sv}", "ay"), ("WriteValue", "aya{sv}", ""), ("StartNotify", "", ""), ("StopNotify", "", ""),
            ("AcquireNotify", "a{sv}", "hq"), ("AcquireWrite", "a{sv}", "hq"),
        ],
        "org.bluez.GattDescriptor1": [("ReadValue", "a{sv}", "ay"), ("WriteValue", "aya{sv}", "")],
        "org.bluez.AgentManager1": [("RegisterAgent", "os", ""), ("UnregisterAgent", "o", ""), ("RequestDefaultAgent", "o", "")],
        "org.bluez.ProfileManager1": [("RegisterProfile", "osa{sv}", ""), ("UnregisterProfile", "o", "")],
        "org.bluez.AdvertisementMonitorManager1": [("RegisterMonitor", "o", ""), ("UnregisterMonitor", "o", "")],
    ]

    /// The methods of `interface` as the imitated release exports them (``BlueZProfile``):
    /// `Adapter1.ConnectDevice` only with `--experimental`.
    func methods(_ interface: String, _ path: String) -> [DBusMethod] {
        let connectDevice = core.profile.exportsConnectDevice
        return (Self.signatures[interface] ?? []).filter { interface != "org.bluez.Adapter1" || $0.0 != "ConnectDevice" || connectDevice }
            .map { name, input, output in
            DBusMethod(name, input: input, output: output) { [weak self] call, responder in
                guard let self else { return }
                self.queue.async { self.route(interface, name, path, call, responder) }
            }
        }
    }

    /// Applies the fault plan, then handles the call.
    func route(_ interface: String, _ member: String, _ path: String, _ call: MethodCall, _ responder: Responder) {
        switch faults.take(interface: interface, member: member, path: path) {
        case nil:
            handle(interface, member, path, call, responder)
        case .delay(let d)?:
            core.clock.schedule(after: d) { [weak self] in self?.handle(interface, member, path, call, responder) }
        case .error(let e)?:
            responder.fail(name: e.name, message: e.message)
        case .noReply?:
            hold(responder)
        }
    }

    /// Keeps a responder unanswered for `noReplyHold` (at most 1024 at once, oldest dropped first).
    private func hold(_ responder: Responder) {
        if held.count >= 1024 { held.removeFirst().work.cancel() }
        let id = ObjectIdentifier(responder)
        let work = core.clock.schedule(after: noReplyHold) { [weak self] in
            self?.held.removeAll { ObjectIdentifier($0.responder) == id }
        }
        held.append((responder, work))
        heldWaiters.reached(held.count)
    }

    func objectManagerInterface() -> DBusInterface {
        DBusInterface(name: "org.freedesktop.DBus.ObjectManager", methods: [
            DBusMethod("GetManagedObjects", output: "a{oa{sa{sv}}}") { [weak self] call, responder in
                guard let self else { return }
                self.queue.async {
                    self.route("org.freedesktop.DBus.ObjectManager", "GetManagedObjects", "/", call, responder)
                }
            },
        ], signals: [DBusSignalInfo("InterfacesAdded", signature: "oa{sa{sv}}"), DBusSignalInfo("InterfacesRemoved", signature: "oas")])
    }

    func managedObjects() -> DBusValue {
        let objects = core.store.managedObjects.sorted { $0.key < $1.key }
        return .dict(key: .objectPath, value: .dict(key: .string, value: .dict(key: .string, value: .variant)),
                     objects.compactMap { path, ifaces in
                         (try? ObjectPath(path)).map { DBusValue.DictEntry(.objectPath($0), ifaces.dbus) }
                     })
    }

    // MARK: Writable properties

    func propertySetter(_ interface: String, _ name: String, _ path: String)
        -> (@Sendable (DBusValue, MethodCall) throws(DBusRemoteError) -> Void)? {
        let writable: Set<String>
        switch interface {
        case "org.bluez.Adapter1": writable = ["Powered", "Alias", "Discoverable", "Pairable", "DiscoverableTimeout"]
        case "org.bluez.Device1": writable = ["Alias", "Trusted", "Blocked"]
        default: return nil
        }
        guard writable.contains(name) else { return nil }
        return { [weak self] value, _ throws(DBusRemoteError) in
            guard let self else { return }
            let result: BlueZErrorReply? = self.sync { core in
                guard let v = PropertyValue(value) else { return .invalidArguments }
                do throws(BlueZErrorReply) {
                    if interface == "org.bluez.Adapter1" {
                        guard let index = core.adapterIndexes.first(where: { BlueZPath.adapter($0) == path }) else { return .doesNotExist }
                        try core.setAdapterProperty(index, name, v)
                    } else {
                        try core.setDeviceProperty(path, name, v)
                    }
                } catch { return error }
                if let stored = core.store.property(path, interface, name) {
                    self.tree.resync(path, interface, name, stored)
                }
                return nil
            }
            if let result { throw DBusRemoteError(name: result.name, message: result.message) }
        }
    }
}
