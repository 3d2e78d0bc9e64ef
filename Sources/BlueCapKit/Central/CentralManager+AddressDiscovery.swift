// CentralManager+AddressDiscovery: the discovery a connection by address runs when BlueZ has no
// Adapter1.ConnectDevice, shared with the manager's own scan (one bluetoothd discovery session
// per D-Bus client: our StopDiscovery must not end a scan, nor a scan's end our search).
import BlueZ
import DBus
import Futures

extension CentralManager {
    // MARK: - Searching

    /// Starts looking for `op`'s address: joins the adapter's discovery (starting it when neither
    /// a scan nor another search of this manager runs), then connects the device once heard.
    func search(_ op: AddressConnect) {
        guard !op.isFinished else { return }
        let joined = op.state.withLock { s -> Bool in
            guard !s.finished, !s.searching else { return false }
            s.searching = true
            return true
        }
        guard joined else { return }
        inner.withLock { _ = $0.addressSearches[op.adapter, default: []].insert(op.address) }
        applyDiscovery(on: op.adapter, start: true) { [weak self] in
            // Heard before the discovery began (or by another client's discovery).
            guard let self, let path = self.devicePath(op) else { return }
            self.heard(op, path: path)
        }
    }

    /// A `Device1` object appeared (owner thread): the address a search waits for?
    func addressSearchSaw(_ path: ObjectPath) {
        guard let address = tree?.deviceAddress(at: path) else { return }
        let op = inner.withLock { s -> AddressConnect? in
            guard let adapter = s.addressSearches.first(where: { path.isDescendant(of: $0.key, orSelf: false) && $0.value.contains(address) })?.key
            else { return nil }
            return s.addressConnects[AddressConnect.key(adapter: adapter, address: address)]
        }
        if let op { heard(op, path: path) }
    }

    /// `op`'s address was heard: stop searching for it and connect.
    private func heard(_ op: AddressConnect, path: ObjectPath) {
        let wasSearching = op.state.withLock { s -> Bool in
            defer { s.searching = false }
            return s.searching && !s.finished
        }
        guard wasSearching else { return }
        BlueZLog.debug("connect(address: \(op.address)): heard at \(path.rawValue); connecting")
        endSearch(op)
        connectKnown(op, path: path)
    }

    /// Drops `op`'s address from its adapter's searches; the discovery stops when nothing of
    /// this manager needs it any more.
    func endSearch(_ op: AddressConnect) {
        let removed = inner.withLock { s -> Bool in
            guard s.addressSearches[op.adapter]?.remove(op.address) != nil else { return false }
            if s.addressSearches[op.adapter]?.isEmpty == true { s.addressSearches[op.adapter] = nil }
            return true
        }
        if removed { applyDiscovery(on: op.adapter, start: false) }
    }

    /// A peripheral's connection attempt waits for its device object (bluetoothd removed it):
    /// a discovery for the address its path carries runs on its adapter while `on` (counted:
    /// each `true` is ended by one `false`). The peripheral connects when the object is back.
    func setDeviceSearch(for peripheral: Peripheral, _ on: Bool) {
        let address = peripheral.discoveredAddress.uppercased(), adapter = peripheral.adapterPath
        let changed = inner.withLock { s -> Bool in
            var counts = s.deviceSearches[adapter] ?? [:]
            let before = counts[address] ?? 0
            guard on || before > 0 else { return false }
            counts[address] = on ? before + 1 : (before > 1 ? before - 1 : nil)
            s.deviceSearches[adapter] = counts.isEmpty ? nil : counts
            return (before == 0) == on
        }
        if changed { applyDiscovery(on: adapter, start: on) }
    }

    /// Whether a search by address or a scan of this manager needs the discovery on `adapter`.
    func needsDiscovery(on adapter: ObjectPath) -> Bool {
        inner.withLock { !$0.searchedAddresses(on: adapter).isEmpty || $0.scan?.adapter == adapter }
    }

    /// Whether searches by address of this manager run on `adapter`.
    func hasAddressSearches(on adapter: ObjectPath) -> Bool {
        inner.withLock { !$0.searchedAddresses(on: adapter).isEmpty }
    }

    // MARK: - bluetoothd's discovery session

    /// Brings bluetoothd's discovery session of our connection on `adapter` in line with what the
    /// manager needs: nothing (`StopDiscovery`), the scan's filter, or a filter for the searched
    /// addresses (`SetDiscoveryFilter`, then `StartDiscovery` when `start`). `started` runs once
    /// discovery runs.
    func applyDiscovery(on adapter: ObjectPath, start: Bool, started: (@Sendable () -> Void)? = nil) {
        guard let connection else { return }
        let proxy = Adapter1(connection: connection, path: adapter)
        let (searches, scan) = inner.withLock { s in
            (s.searchedAddresses(on: adapter), s.scan.flatMap { $0.adapter == adapter ? $0 : nil })
        }
        if searches.isEmpty {
            if let scan {
                proxy.setDiscoveryFilter(scan.filter) { _ in }
            } else {
                proxy.stopDiscovery { result in
                    if case .failure(let e) = result { BlueZLog.debug("StopDiscovery after a search by address: \(e)") }
                }
            }
            return
        }
        proxy.setDiscoveryFilter(discoveryFilter(searches: searches, scan: scan)) { [weak self] result in
            if case .failure(let e) = result { BlueZLog.debug("SetDiscoveryFilter for a search by address: \(e)") }
            guard start, let self else { return }
            // Every search ended while the filter was being set (its StopDiscovery went first):
            // take the filter back instead of starting.
            guard self.needsDiscovery(on: adapter) else { return proxy.setDiscoveryFilter(nil) { _ in } }
            proxy.startDiscovery { [weak self] result in
                guard let self else { return }
                if case .failure(let e) = result, e.kind != .inProgress {
                    self.searchFailed(on: adapter, error: e)
                    return
                }
                // Ended while StartDiscovery was under way: our StopDiscovery may have come
                // first, so end bluetoothd's discovery session again.
                guard self.needsDiscovery(on: adapter) else { return proxy.stopDiscovery { _ in } }
                started?()
            }
        }
    }

    /// The filter for `searches` (and `scan`, if one runs on the adapter): transport "le", the
    /// address as pattern when there is one address and no scan; with a scan, every LE device
    /// (the scan checks its UUIDs, RSSI and pattern again on our side).
    func discoveryFilter(searches: Set<String>, scan: ScanSession?) -> Adapter1.DiscoveryFilter {
        if let scan {
            return Adapter1.DiscoveryFilter(transport: "le", duplicateData: scan.filter.duplicateData)
        }
        return Adapter1.DiscoveryFilter(transport: "le", duplicateData: false, pattern: searches.count == 1 ? searches.first : nil)
    }

    /// The filter a scan sets: its own, or the merged one while searches by address run.
    func scanDiscoveryFilter(_ scan: ScanSession) -> Adapter1.DiscoveryFilter {
        let searches = inner.withLock { $0.searchedAddresses(on: scan.adapter) }
        return searches.isEmpty ? scan.filter : discoveryFilter(searches: searches, scan: scan)
    }

    /// BlueZ refused to start the discovery: every search on `adapter` fails.
    private func searchFailed(on adapter: ObjectPath, error: BlueZError) {
        let ops = inner.withLock { s in s.addressConnects.values.filter { $0.adapter == adapter && $0.state.withLock(\.searching) } }
        for op in ops { end(op, with: .failure(CentralManagerError.addressConnectFailed(error, address: op.address))) }
    }
}
