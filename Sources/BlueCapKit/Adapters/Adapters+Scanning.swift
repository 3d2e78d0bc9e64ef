// Adapters+Scanning: scanning on several adapters at once, results tagged with the adapter.
import BlueZ
import Futures
import Locking

extension Adapters {
    /// Scans on every adapter in `names` (nil: every adapter powered on now) at once and yields
    /// each peripheral with the adapter that heard it. Each adapter scans as
    /// ``CentralManager/startScanning(forServiceUUIDs:capacity:timeout:options:)`` does
    /// (`org.bluez.Adapter1.SetDiscoveryFilter` + `StartDiscovery` on each, the same filter and
    /// checks). An adapter that is not powered on within `poweredOnTimeout`, or whose scan fails,
    /// ends the whole stream with that error (the other adapters stop). A new call replaces the
    /// running scan. `capacity` bounds the merged stream: a slow subscriber loses the oldest results.
    /// When every subscription to the stream is cancelled (it is abandoned), the scan stops as
    /// with ``stopScanning()``.
    public func startScanning(on names: [String]? = nil, forServiceUUIDs uuids: [BLEUUID]? = nil, capacity: Int = 100,
                              options: ScanOptions = ScanOptions(),
                              poweredOnTimeout: Duration = .seconds(10)) -> FutureStream<AdapterScanResult> {
        let promise = StreamPromise<AdapterScanResult>(capacity: max(1, capacity))
        guard connection != nil else {
            promise.finish(throwing: BlueCapError(.busUnavailable, Self.scanOperation, adapter: nil, busError ?? "no D-Bus connection"))
            return promise.stream
        }
        let chosen = names ?? all.filter(\.powered).map(\.name)
        guard !chosen.isEmpty else {
            promise.finish(throwing: BlueCapError(.doesNotExist, Self.scanOperation, adapter: nil, "no powered adapter to scan on"))
            return promise.stream
        }
        let managers = chosen.map { CentralManager(adapter: $0, session: session, context: .immediate) }
        let scan = MultiAdapterScan(managers: managers, promise: promise)
        exchangeScan(scan)?.stop()
        // Nobody listens any more (every subscription cancelled): the adapters stop discovering.
        promise.onAbandoned { [weak self] in if self?.clearScan(scan) == true { scan.stop() } }
        for (name, manager) in zip(chosen, managers) {
            manager.whenPoweredOn(timeout: poweredOnTimeout).onComplete(context: .immediate) { [weak self] result in
                guard self?.scan === scan else { return }
                if case .failure = result {
                    self?.fail(scan, BlueCapError(.notPoweredOn, Self.scanOperation, adapter: name,
                                                       "\(name) is not powered on (state \(manager.state))"))
                    return
                }
                let stream = manager.startScanning(forServiceUUIDs: uuids, capacity: capacity, options: options)
                stream.onSuccess(context: .immediate) { [weak self] p in
                    guard self?.scan === scan else { return }
                    promise.success(AdapterScanResult(adapter: name, peripheral: p))
                }
                stream.onFailure(context: .immediate) { [weak self] e in
                    guard self?.scan === scan else { return }
                    self?.fail(scan, e)
                }
            }
        }
        return promise.stream
    }

    static let scanOperation = "Adapters.startScanning (org.bluez.Adapter1.StartDiscovery)"

    /// Stops the multi-adapter scan (`org.bluez.Adapter1.StopDiscovery` on each) and finishes its stream.
    public func stopScanning() { exchangeScan(nil)?.stop() }

    /// Whether a multi-adapter scan runs.
    public var isScanning: Bool { scan != nil }

    private func fail(_ scan: MultiAdapterScan, _ error: any Error) {
        guard clearScan(scan) else { return }
        for m in scan.managers { m.stopScanning() }
        scan.promise.finish(throwing: error)
    }
}
