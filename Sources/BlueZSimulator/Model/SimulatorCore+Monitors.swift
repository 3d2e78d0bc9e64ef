// SimulatorCore+Monitors: org.bluez.AdvertisementMonitorManager1 (bluetoothd --experimental):
// registered monitoring apps, or-pattern matching on what a passive scan hears, and bluetoothd's
// RSSI found/lost rules.

// MARK: - Registration

extension SimulatorCore {
    /// `AdvertisementMonitorManager1`'s properties.
    var monitorManagerProperties: [String: PropertyValue] {
        ["SupportedMonitorTypes": .strings(["or_patterns"]), "SupportedFeatures": .strings([])]
    }

    /// `RegisterMonitor(root)` by `owner` with the monitors read from the app; invalid monitors
    /// are released, valid ones activated, then matched against every peer in range.
    public func registerMonitor(adapter index: Int, owner: String, root: String, monitors: [MonitorSpec?], paths: [String]) throws(BlueZErrorReply) {
        guard experimental, let a = adapters[index] else { throw .unknownMethod("org.bluez.AdvertisementMonitorManager1", "RegisterMonitor") }
        let key = AdvertisementKey(owner: owner, path: root)
        guard monitorApps[key] == nil else { throw .alreadyExists }
        let valid = monitors.compactMap { $0 }
        let app = MonitorApp(owner: owner, root: root, adapter: index, monitors: valid)
        monitorApps[key] = app
        for (spec, path) in zip(monitors, paths) where spec == nil {
            monitorBridge?.callMonitor(owner: owner, path: path, member: "Release", device: nil)
        }
        for spec in valid { monitorBridge?.callMonitor(owner: owner, path: spec.path, member: "Activate", device: nil) }
        for peer in peersInRange(of: a) { monitorHeard(peer, by: a) }
    }

    /// `UnregisterMonitor(root)`: every monitor of the app is released.
    public func unregisterMonitor(adapter index: Int, owner: String, root: String) throws(BlueZErrorReply) {
        guard experimental, adapters[index] != nil else { throw .unknownMethod("org.bluez.AdvertisementMonitorManager1", "UnregisterMonitor") }
        guard let app = monitorApps.removeValue(forKey: AdvertisementKey(owner: owner, path: root)), app.adapter == index else {
            throw .doesNotExist
        }
        app.cancelTimers()
        for spec in app.monitors { monitorBridge?.callMonitor(owner: owner, path: spec.path, member: "Release", device: nil) }
    }

    /// The registered monitors of `adapter` (for tests): (owner, root, monitor paths).
    public func monitorRegistrations(adapter index: Int) -> [(owner: String, root: String, monitors: [String])] {
        monitorApps.values.filter { $0.adapter == index }.sorted { ($0.owner, $0.root) < ($1.owner, $1.root) }
            .map { ($0.owner, $0.root, $0.monitors.map(\.path)) }
    }

    /// A client left the bus: its monitoring apps go (no Release: nobody to call).
    func dropMonitors(owner: String) {
        for (key, app) in monitorApps where key.owner == owner {
            app.cancelTimers()
            monitorApps[key] = nil
        }
    }

    /// An adapter went away: its monitoring apps go.
    func dropMonitors(adapter index: Int) {
        for (key, app) in monitorApps where app.adapter == index {
            app.cancelTimers()
            monitorApps[key] = nil
        }
    }
}

// MARK: - Matching

extension SimulatorCore {
    /// One advertising report of `peer` on adapter `a` (or the news that it stopped advertising):
    /// every monitor of `a` applies its patterns to what a passive scan hears, then bluetoothd's
    /// found/lost rules.
    func monitorHeard(_ peer: RemotePeer, by a: AdapterState) {
        guard !monitorApps.isEmpty, a.powered, peer.address != a.address else { return }
        let ad = peer.advertisement
        let structures = ad?.passiveADStructures ?? []
        for app in monitorApps.values.sorted(by: { ($0.owner, $0.root) < ($1.owner, $1.root) }) where app.adapter == a.index {
            for (n, spec) in app.monitors.enumerated() {
                let matched = spec.patterns.contains { p in structures.contains { p.matches(type: $0.type, data: $0.data) } }
                track(app, monitor: n, spec: spec, address: peer.address, heard: matched ? ad?.rssi : nil, adapter: a)
            }
        }
    }

    /// Re-checks every tracked device: one whose peer left the world, moved out of range or
    /// stopped advertising counts as no longer heard.
    func monitorsRefresh() {
        for app in monitorApps.values {
            guard let a = adapters[app.adapter] else { continue }
            let inRange = Dictionary(peersInRange(of: a).map { ($0.address, $0) }, uniquingKeysWith: { x, _ in x })
            for (n, devices) in app.tracked {
                for address in devices.keys.sorted() {
                    if let peer = inRange[address] { monitorHeard(peer, by: a) } else {
                        track(app, monitor: n, spec: app.monitors[n], address: address, heard: nil, adapter: a)
                    }
                }
            }
        }
    }

    /// bluetoothd's rules for one monitor and one device; `heard` is the RSSI of a matching
    /// advertisement, nil when none is heard (stopped, out of range, no longer matching).
    private func track(_ app: MonitorApp, monitor n: Int, spec: MonitorSpec, address: String, heard: Int16?, adapter a: AdapterState) {
        guard let rssi = spec.rssi else {
            // No RSSI settings: every matching advertisement is a DeviceFound; nothing is ever lost.
            if heard != nil { found(app, spec, address, a) }
            return
        }
        let t = app.tracked[n, default: [:]][address] ?? MonitorApp.Tracked()
        app.tracked[n, default: [:]][address] = t
        if let level = heard, level > rssi.high, !t.found {
            if t.highWork == nil {
                t.highWork = clock.schedule(after: .seconds(Int(rssi.highTimeout))) { [weak self, weak app] in
                    guard let self, let app else { return }
                    t.highWork = nil
                    guard !t.found, self.monitorApps.values.contains(where: { $0 === app }), let a = self.adapters[app.adapter],
                          let level = self.currentLevel(of: address, for: spec, at: a), level > rssi.high else { return }
                    t.found = true
                    self.found(app, spec, address, a)
                }
            }
        } else if heard == nil || heard! <= rssi.high {
            t.highWork?.cancel()
            t.highWork = nil
        }
        if t.found, heard.map({ $0 < rssi.low }) ?? true {
            if t.lostWork == nil {
                t.lostWork = clock.schedule(after: .seconds(Int(rssi.lowTimeout))) { [weak self, weak app] in
                    guard let self, let app else { return }
                    t.lostWork = nil
                    guard t.found, self.monitorApps.values.contains(where: { $0 === app }), let a = self.adapters[app.adapter] else { return }
                    if let level = self.currentLevel(of: address, for: spec, at: a), level >= rssi.low { return }
                    t.found = false
                    self.monitorBridge?.callMonitor(owner: app.owner, path: spec.path, member: "DeviceLost",
                                                    device: BlueZPath.device(adapter: a.index, address: address))
                }
            }
        } else {
            t.lostWork?.cancel()
            t.lostWork = nil
        }
    }

    /// The RSSI at which `a` hears a matching advertisement of `address` now, nil when it does not.
    private func currentLevel(of address: String, for spec: MonitorSpec, at a: AdapterState) -> Int16? {
        guard a.powered, let peer = peersInRange(of: a).first(where: { $0.address == address }), let ad = peer.advertisement else { return nil }
        let structures = ad.passiveADStructures
        guard spec.patterns.contains(where: { p in structures.contains { p.matches(type: $0.type, data: $0.data) } }) else { return nil }
        return ad.rssi
    }

    /// `DeviceFound(device)`, creating the device object first as bluetoothd does.
    private func found(_ app: MonitorApp, _ spec: MonitorSpec, _ address: String, _ a: AdapterState) {
        if a.devices[address] == nil, let peer = peersInRange(of: a).first(where: { $0.address == address }), let ad = peer.advertisement {
            let device = DeviceState(adapter: a.index, address: address)
            device.peer = peer
            a.devices[address] = device
            var heard = ad
            if heard.nameInScanResponse { heard.name = nil }
            store.add(device.path, ["org.bluez.Device1": deviceProperties(device, ad: heard, adapter: a)])
        }
        guard let device = a.devices[address] else { return }
        monitorBridge?.callMonitor(owner: app.owner, path: spec.path, member: "DeviceFound", device: device.path)
    }
}
