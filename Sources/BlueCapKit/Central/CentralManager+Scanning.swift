// CentralManager: scanning (Adapter1.SetDiscoveryFilter + StartDiscovery), client-side filtering, watchdog.
import BlueZ
import DBus
import Foundation
import Futures

/// One `startScanning` call.
struct ScanSession {
    let id: Int
    let promise: StreamPromise<Peripheral>
    let adapter: ObjectPath
    let uuids: Set<BLEUUID>
    let options: ScanOptions
    var reported: Set<ObjectPath> = []
    var restarts = 0
    /// The `timeout` timer, cancelled when the scan ends another way.
    var timer: ScheduledTask?

    /// Whether a lone RSSI change of `path` (to `rssi`) is reported, and the device marked as
    /// reported; nil when the filter needs properties other than RSSI (UUIDs, pattern): the
    /// caller then checks the device's properties in the tree.
    mutating func reportsRSSIChange(of path: ObjectPath, rssi: Int16?) -> Bool? {
        if !uuids.isEmpty || !(options.pattern ?? "").isEmpty || options.pathloss != nil { return nil }
        // No RSSI: not heard in this discovery.
        guard path.isDescendant(of: adapter, orSelf: false), let rssi else { return false }
        if let threshold = options.rssiThreshold, rssi < threshold { return false }
        return reported.insert(path).inserted || options.allowDuplicates
    }

    var filter: Adapter1.DiscoveryFilter {
        options.discoveryFilter(uuids: uuids.map(\.uuidString).sorted())
    }
}

extension CentralManager {
    /// How many times a scan is restarted after BlueZ stopped discovery on its own.
    static let scanRestartLimit = 20

    /// Scans (`org.bluez.Adapter1.SetDiscoveryFilter`, then `StartDiscovery`) and yields each
    /// peripheral found: once per scan, or on every advertisement update with
    /// `options.allowDuplicates`. UUIDs, RSSI and pattern are checked again on our side, since
    /// bluetoothd merges every client's filter. If BlueZ stops discovering while we scan, discovery
    /// is started again (driven by `Adapter1.Discovering` changes). With `timeout`, the scan
    /// stops after it and the stream ends with ``BlueCapError/scanTimedOut(after:)``
    /// (a last failed result, then the end). A new scan replaces the previous one. Fails with
    /// ``BlueCapError/notPoweredOn(_:)`` unless `.poweredOn`.
    ///
    /// The scan stops (`StopDiscovery`, ``isScanning`` false) as soon as nobody consumes the
    /// stream any more: when it is abandoned, i.e. every subscription to it was cancelled — for
    /// instance `startScanning().first()` after the first peripheral, or
    /// `startScanning().first().timeout(after: 5)` when the timeout fires, or a
    /// `for try await` over its `values` that ends.
    public func startScanning(forServiceUUIDs uuids: [BLEUUID]? = nil, capacity: Int = 100, timeout: Duration? = nil,
                              options: ScanOptions = ScanOptions()) -> FutureStream<Peripheral> {
        let promise = StreamPromise<Peripheral>(capacity: max(1, capacity))
        guard let connection, let tracker else {
            promise.finish(throwing: busUnavailable)
            return promise.stream
        }
        let snapshot = tracker.snapshot
        guard snapshot.state == .poweredOn, let adapterPath = snapshot.adapter else {
            promise.finish(throwing: CentralManagerError.notPoweredOn(snapshot.state))
            return promise.stream
        }
        let (session, previous) = inner.withLock { s -> (ScanSession, ScanSession?) in
            s.nextScan += 1
            let session = ScanSession(id: s.nextScan, promise: promise, adapter: adapterPath, uuids: Set(uuids ?? []), options: options)
            let previous = s.scan
            s.scan = session
            return (session, previous)
        }
        previous?.timer?.cancel()
        previous?.promise.finish(throwing: CentralManagerError.scanReplaced)
        beginDiscovery(Adapter1(connection: connection, path: adapterPath), session: session)
        // Nobody consumes the stream any more: stop the scan.
        promise.onAbandoned { [weak self] in self?.stopScanning(id: session.id) }
        if let timeout {
            let timer = after(timeout) { [weak self] in
                self?.stopScanning(id: session.id, error: .scanTimedOut(after: timeout))
            }
            let running = inner.withLock { s -> Bool in
                guard s.scan?.id == session.id else { return false }
                s.scan?.timer = timer
                return true
            }
            if !running { timer.cancel() }
        }
        return promise.stream
    }

    /// Stops scanning (`org.bluez.Adapter1.StopDiscovery`) and finishes the scan stream.
    public func stopScanning() { stopScanning(id: nil) }

    /// Whether a scan is running.
    public var isScanning: Bool { inner.withLock { $0.scan != nil } }

    /// Stops scan `id` (any scan when nil); its stream finishes once StopDiscovery has answered,
    /// with `error` as its last result when given.
    private func stopScanning(id: Int?, error: CentralManagerError? = nil) {
        let session = inner.withLock { s -> ScanSession? in
            guard let scan = s.scan, id == nil || scan.id == id else { return nil }
            s.scan = nil
            return scan
        }
        session?.timer?.cancel()
        guard let session, let connection else { return }
        // A search by address still needs the discovery: narrow the filter back to it.
        if hasAddressSearches(on: session.adapter) {
            applyDiscovery(on: session.adapter, start: false)
            if let error { session.promise.finish(throwing: error) } else { session.promise.finish() }
            return
        }
        // The stream finishes once bluetoothd has ended our discovery session.
        Adapter1(connection: connection, path: session.adapter).stopDiscovery { result in
            if case .failure(let e) = result { BlueZLog.debug("StopDiscovery: \(e)") }
            if let error { session.promise.finish(throwing: error) } else { session.promise.finish() }
        }
    }

    /// SetDiscoveryFilter then StartDiscovery; reports devices already being heard.
    private func beginDiscovery(_ adapter: Adapter1, session: ScanSession) {
        adapter.setDiscoveryFilter(scanDiscoveryFilter(session)) { [weak self] result in
            guard let self else { return }
            if case .failure(let e) = result { return self.endScan(id: session.id, error: .scanFailed(e)) }
            // Stopped (e.g. abandoned) before the filter was set: do not start discovery.
            guard self.inner.withLock({ $0.scan?.id == session.id }) else { return }
            self.startDiscovery(adapter, session: session, attempt: 1)
        }
    }

    /// How often `StartDiscovery` is asked again after `InProgress`, and the first delay (doubled each time).
    static let discoveryBusyRetries = 5
    static let discoveryBusyDelay = Duration.milliseconds(100)

    /// `StartDiscovery` for `session`. `InProgress` is bluetoothd's answer both when this
    /// connection's discovery already runs and when a request of this connection is still under
    /// way: asked again, up to ``discoveryBusyRetries`` times with a growing delay. Still
    /// `InProgress` then, it is taken as running when the adapter is discovering, and otherwise
    /// ends the scan naming the likely cause and the fix (after bluetoothd was killed while it
    /// scanned, 5.66 and 5.82 answer `InProgress` for as long as the controller discovers).
    private func startDiscovery(_ adapter: Adapter1, session: ScanSession, attempt: Int) {
        adapter.startDiscovery { [weak self] result in
            guard let self else { return }
            if case .failure(let e) = result {
                guard e.kind == .inProgress else { return self.endScan(id: session.id, error: .scanFailed(e)) }
                if attempt <= Self.discoveryBusyRetries {
                    let delay = Self.discoveryBusyDelay * (1 << (attempt - 1))
                    BlueZLog.debug("StartDiscovery: \(e); asking again in \(delay) (attempt \(attempt + 1))")
                    self.after(delay) { [weak self] in
                        guard let self, self.inner.withLock({ $0.scan?.id == session.id }) else { return }
                        self.startDiscovery(adapter, session: session, attempt: attempt + 1)
                    }
                    return
                }
                if self.adapterProperty(session.adapter, "Discovering") != .bool(true) {
                    // Still InProgress, and the adapter is not discovering: the controller is busy
                    // for someone else (seen after bluetoothd was killed while it scanned).
                    return self.endScan(id: session.id, error: .scanFailed(BlueZError(
                        kind: .inProgress,
                        message: "StartDiscovery answered \"\(e.message)\" \(Self.discoveryBusyRetries + 1) times and the adapter is not discovering:"
                            + " the controller is likely still discovering for a bluetoothd that was stopped while it scanned;"
                            + " power the adapter off and on (`bluetoothctl power off; bluetoothctl power on`) to reset it",
                        operation: e.operation ?? "org.bluez.Adapter1.StartDiscovery", path: e.path)))
                }
            }
            // Stopped while StartDiscovery was under way, and no scan replaced it: our
            // StopDiscovery may have come first, so end the discovery session again.
            if self.inner.withLock({ $0.scan == nil }) {
                if self.hasAddressSearches(on: session.adapter) { return }
                return adapter.stopDiscovery { _ in }
            }
            for path in self.tree?.paths(withInterface: Device1.interface, under: session.adapter) ?? [] {
                self.consider(path, update: false)
            }
        }
    }

    /// The adapter's property `name` (`Discovering`, `Powered`), as the tree has it.
    private func adapterProperty(_ adapter: ObjectPath, _ name: String) -> DBusValue? {
        tree?.properties(at: adapter, interface: Adapter1.interface)?[name]
    }

    private func endScan(id: Int, error: CentralManagerError) {
        let session = inner.withLock { s -> ScanSession? in
            guard let scan = s.scan, scan.id == id else { return nil }
            s.scan = nil
            return scan
        }
        session?.timer?.cancel()
        session?.promise.finish(throwing: error)
    }

    // MARK: - Tree events

    /// One tree event (owner thread): device reports and the discovery watchdog.
    func treeEvent(_ event: ObjectTreeEvent) {
        switch event {
        case .interfacesAdded(let path, let ifaces) where ifaces[Device1.interface] != nil:
            consider(path, update: false)
            addressSearchSaw(path)
        case .propertiesChanged(let path, let interface, let changed, let invalidated) where interface == Device1.interface:
            if changed.keys.contains(where: Self.advertising.contains) {
                consider(path, update: true, changed: changed, invalidated: invalidated)
            }
        case .propertiesChanged(let path, let interface, let changed, _) where interface == Adapter1.interface:
            // Not when the adapter is powering off (one change says both): the scan ends
            // with the adapter state, and a restart would only be refused.
            if changed["Discovering"] == .bool(false), changed["Powered"] != .bool(false) { discoveryStopped(adapter: path) }
        default:
            break
        }
    }

    /// A lone `Device1.RSSI` change (owner thread; the tree routes it here instead of to
    /// ``treeEvent(_:)`` and the device's own observer): the peripheral's RSSI first, then the
    /// scan's report, with one lock of ours and no copy of the device's properties unless the
    /// scan filters on UUIDs or a pattern.
    func rssiChanged(_ path: ObjectPath, _ value: DBusValue) {
        let rssi = try? Int16(dbusValue: value)
        let (peripheral, report, promise) = inner.withLock { s -> (Peripheral?, Bool?, StreamPromise<Peripheral>?) in
            let peripheral = s.peripherals[path]
            guard s.scan != nil else { return (peripheral, false, nil) }
            return (peripheral, s.scan!.reportsRSSIChange(of: path, rssi: rssi), s.scan!.promise)
        }
        peripheral?.rssiChanged(rssi)
        switch report {
        case nil:
            consider(path, update: true, changed: ["RSSI": value])
        case true?:
            guard let promise, let reported = peripheral ?? self.peripheral(for: path) else { return }
            promise.success(reported)
        case false?:
            break
        }
    }

    /// The `Device1` properties that make a scan report a device again.
    static let advertising: Set<String> = ["RSSI", "ManufacturerData", "ServiceData", "UUIDs", "Name", "TxPower"]

    /// Yields the device at `path` if a scan is on and it passes the scan's filter. Only the
    /// properties the filter needs are decoded (RSSI always; UUIDs, Address and Name when the
    /// scan filters on them), and the scan's reported set is updated in place.
    private func consider(_ path: ObjectPath, update: Bool, changed: [String: DBusValue]? = nil, invalidated: [String] = []) {
        guard let tree, let raw = tree.properties(at: path, interface: Device1.interface) else { return }
        let promise = inner.withLock { s -> StreamPromise<Peripheral>? in
            guard s.scan != nil, Self.passes(s.scan!, path: path, raw: raw) else { return nil }
            let first = s.scan!.reported.insert(path).inserted
            guard first || (update && s.scan!.options.allowDuplicates) else { return nil }
            return s.scan!.promise
        }
        guard let promise, let peripheral = peripheral(for: path) else { return }
        // Its own observer may run after ours.
        if let changed { peripheral.apply(changed: changed, invalidated: invalidated) } else { peripheral.refreshProperties() }
        promise.success(peripheral)
    }

    /// Whether the device with `Device1` properties `raw` passes `scan`'s filter.
    private static func passes(_ scan: ScanSession, path: ObjectPath, raw: [String: DBusValue]) -> Bool {
        guard path.isDescendant(of: scan.adapter, orSelf: false) else { return false }
        // No RSSI: not heard in this discovery.
        guard let rssi = raw["RSSI"].flatMap({ try? Int16(dbusValue: $0) }) else { return false }
        if let threshold = scan.options.rssiThreshold, rssi < threshold { return false }
        if !scan.options.passesPathloss(raw, rssi: rssi) { return false }
        if !scan.uuids.isEmpty {
            let uuids = raw["UUIDs"].flatMap { try? [String](dbusValue: $0) } ?? []
            let advertised = Set(uuids.compactMap { BLEUUID(string: $0) })
            guard !advertised.isDisjoint(with: scan.uuids) else { return false }
        }
        if let pattern = scan.options.pattern, !pattern.isEmpty {
            let address = raw["Address"].flatMap { try? String(dbusValue: $0) } ?? ""
            let byAddress = address.uppercased().hasPrefix(pattern.uppercased())
            let byName = raw["Name"].flatMap { try? String(dbusValue: $0) }?.hasPrefix(pattern) ?? false
            guard byAddress || byName else { return false }
        }
        return true
    }

    /// The watchdog: BlueZ stopped discovering while we scan; start again.
    private func discoveryStopped(adapter path: ObjectPath) {
        guard let connection, adapterProperty(path, "Powered") != .bool(false) else { return }
        let session = inner.withLock { s -> ScanSession? in
            guard var scan = s.scan, scan.adapter == path, s.lastState == .poweredOn else { return nil }
            scan.restarts += 1
            s.scan = scan
            return scan
        }
        guard let session else { return }
        guard session.restarts <= Self.scanRestartLimit else {
            return endScan(id: session.id, error: .scanFailed(BlueZError(
                kind: .failed, message: "discovery stopped \(session.restarts) times", operation: "org.bluez.Adapter1.StartDiscovery",
                path: path.rawValue)))
        }
        BlueZLog.debug("\(path.rawValue): Discovering turned false while scanning; restarting discovery")
        beginDiscovery(Adapter1(connection: connection, path: path), session: session)
    }
}
