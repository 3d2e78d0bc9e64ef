// CentralManager+Monitoring: passive scanning through org.bluez.AdvertisementMonitorManager1.
import BlueZ
import DBus
import Foundation
import Futures
import Locking

/// Monitor application roots are unique per process: `/org/bluecap/monitorN`.
private let nextMonitorRoot = Locked(0)

extension CentralManager {
    /// Monitors advertisements passively on the adapter in use and yields each device found and
    /// lost: an `org.bluez.AdvertisementMonitor1` object of type `or_patterns` with `patterns`
    /// (any one matching is enough) and `rssi`, exported under its own ObjectManager root and
    /// registered with `org.bluez.AdvertisementMonitorManager1.RegisterMonitor`. bluetoothd then
    /// scans passively (no scan requests: nothing is sent to the advertisers) whether or not
    /// anyone discovers, and calls `DeviceFound`/`DeviceLost`.
    ///
    /// - A passive scan never receives scan responses, where bluetoothd advertisers put their
    ///   `LocalName`: patterns on the name do not match them (see ``MonitorPattern``).
    /// - Without `rssi` BlueZ reports every matching advertisement as `.found` and never `.lost`.
    /// - BlueZ 5.66 exports `AdvertisementMonitorManager1` only when bluetoothd runs with
    ///   `--experimental`: without it the stream fails with
    ///   a ``BlueCapError`` of kind `.monitoringUnavailable`, whose message says how to enable it
    ///   (`Experimental = true` in `/etc/bluetooth/main.conf`). With
    ///   `fallbackToActiveScanning` it scans actively instead (``startScanning(forServiceUUIDs:capacity:timeout:options:)``,
    ///   replacing a running scan) and matches the patterns against each device's manufacturer
    ///   and service data on our side; `.lost` is never reported then.
    ///
    /// One monitoring session per manager: a new call replaces the previous one. The stream
    /// fails with kind `.monitorReleased` when bluetoothd releases the monitor and
    /// `.adapterUnavailable` when the adapter goes away or off. `capacity`
    /// bounds the buffer of a slow subscriber (the oldest events are dropped).
    public func startMonitoring(patterns: [MonitorPattern], rssi: MonitorRSSI? = nil, capacity: Int = 100,
                                fallbackToActiveScanning: Bool = false) -> FutureStream<MonitorEvent> {
        let promise = StreamPromise<MonitorEvent>(capacity: max(1, capacity))
        guard let connection, let tracker, let tree else {
            promise.finish(throwing: busUnavailable)
            return promise.stream
        }
        let snapshot = tracker.snapshot
        guard snapshot.state == .poweredOn, let adapterPath = snapshot.adapter, let owner = tree.status.owner else {
            promise.finish(throwing: BlueCapError(.notPoweredOn, Self.monitorOperation, adapter: snapshot.adapter.map(Adapter1.name(of:)),
                                                  "the adapter is not powered on (state \(snapshot.state))"))
            return promise.stream
        }
        let name = Adapter1.name(of: adapterPath)
        guard !patterns.isEmpty else {
            promise.finish(throwing: BlueCapError(.invalidArguments, Self.monitorOperation, adapter: name, "an or_patterns monitor needs at least one pattern"))
            return promise.stream
        }
        let id = nextMonitorRoot.withLock { n -> Int in n += 1; return n }
        let session = MonitorSession(id: id, adapter: adapterPath, patterns: patterns, promise: promise)
        let previous = inner.withLock { s -> MonitorSession? in defer { s.monitor = session }; return s.monitor }
        if let previous { endMonitoring(previous, error: nil) }

        guard tree.interfaces(at: adapterPath)?[AdvertisementMonitorManager1.interface] != nil else {
            guard fallbackToActiveScanning else {
                clearMonitor(session)
                promise.finish(throwing: BlueCapError(.monitoringUnavailable, Self.monitorOperation, adapter: name,
                                                      AdvertisementMonitorManager1.missingMessage(adapter: adapterPath)))
                return promise.stream
            }
            BlueZLog.debug("\(AdvertisementMonitorManager1.missingMessage(adapter: adapterPath)); scanning actively as asked")
            startFallbackScan(session)
            return promise.stream
        }
        let monitor = AdvertisementMonitor(patterns: patterns.map(\.bluez), rssiLowThreshold: rssi?.lowThreshold,
                                           rssiHighThreshold: rssi?.highThreshold, rssiLowTimeout: rssi?.lowTimeout,
                                           rssiHighTimeout: rssi?.highTimeout, rssiSamplingPeriod: rssi?.samplingPeriod)
        let root: ObjectPath = (try? ObjectPath("/org/bluecap/monitor\(id)")) ?? "/org/bluecap/monitor"
        let app = AdvertisementMonitorApplication(root: root, monitors: [monitor])
        Task { [weak self] in
            do throws(BlueZError) {
                let handle = try await app.register(on: connection, adapter: adapterPath, allowedCaller: owner) { [weak self] _, event in
                    self?.monitorEvent(event, session: session)
                }
                if !session.attach(handle) { await handle.unregister() }
            } catch {
                guard let self, self.clearMonitor(session) else { return }
                _ = session.end()
                promise.finish(throwing: BlueCapError(error, Self.monitorOperation, adapter: name))
            }
        }
        return promise.stream
    }

    static let monitorOperation = "CentralManager.startMonitoring (org.bluez.AdvertisementMonitorManager1.RegisterMonitor)"

    /// Stops monitoring: `org.bluez.AdvertisementMonitorManager1.UnregisterMonitor`, the objects
    /// are removed, and the stream finishes.
    public func stopMonitoring() {
        guard let session = inner.withLock({ s -> MonitorSession? in defer { s.monitor = nil }; return s.monitor }) else { return }
        endMonitoring(session, error: nil)
    }

    /// Whether a monitoring session runs and bluetoothd activated it (`Activate()` was called;
    /// always false for the active-scanning fallback).
    public var isMonitoring: Bool { inner.withLock { $0.monitor }?.isActive ?? false }

    // MARK: - Internals

    /// Clears the session if it is the current one; returns whether it was.
    @discardableResult
    func clearMonitor(_ session: MonitorSession) -> Bool {
        inner.withLock { s in
            guard s.monitor === session else { return false }
            s.monitor = nil
            return true
        }
    }

    private func endMonitoring(_ session: MonitorSession, error: BlueCapError?) {
        let (handle, wasRunning) = session.end()
        if let handle { Task { await handle.unregister() } }
        if wasRunning, session.isFallback { stopScanning() }
        guard wasRunning else { return }
        if let error { session.promise.finish(throwing: error) } else { session.promise.finish() }
    }

    /// The fallback: an active scan reporting every update, matched against the patterns here.
    private func startFallbackScan(_ session: MonitorSession) {
        session.setFallback()
        let stream = startScanning(options: ScanOptions(allowDuplicates: true))
        stream.onSuccess(context: .immediate) { p in
            guard !session.isEnded, p.advertisement.matches(any: session.patterns), session.firstReport(p.path) else { return }
            session.promise.success(.found(p))
        }
        stream.onFailure(context: .immediate) { [weak self] e in
            guard let self, self.clearMonitor(session) else { return }
            self.endMonitoring(session, error: BlueCapError(.adapterUnavailable, Self.monitorOperation, adapter: Adapter1.name(of: session.adapter),
                                                            "the fallback scan ended: \(e)"))
        }
    }

    /// A call from bluetoothd on the session's monitor (owner thread).
    private func monitorEvent(_ event: AdvertisementMonitorEvent, session: MonitorSession) {
        guard !session.isEnded else { return }
        switch event {
        case .activate:
            BlueZLog.debug("monitor \(session.id) on \(session.adapter.rawValue): activated")
            session.activated()
        case .release:
            guard clearMonitor(session) else { return }
            endMonitoring(session, error: BlueCapError(.monitorReleased, Self.monitorOperation, adapter: Adapter1.name(of: session.adapter),
                                                       "bluetoothd released the monitor (refused or deactivated)"))
        case .deviceFound(let path):
            if let p = peripheral(for: path) { session.promise.success(.found(p)) }
        case .deviceLost(let path):
            if let p = peripheral(for: path) { session.promise.success(.lost(p)) }
        }
    }

    /// Ends the session when its adapter is no longer the powered adapter in use.
    func endMonitoringIfAdapterGone(_ snapshot: AdapterStateTracker.Snapshot) {
        let session = inner.withLock { s -> MonitorSession? in
            guard let m = s.monitor, snapshot.state != .poweredOn || snapshot.adapter != m.adapter else { return nil }
            s.monitor = nil
            return m
        }
        guard let session else { return }
        endMonitoring(session, error: BlueCapError(.adapterUnavailable, Self.monitorOperation, adapter: Adapter1.name(of: session.adapter),
                                                   "the adapter went away or off (state \(snapshot.state))"))
    }
}
