// MultiAdapterScan: one CentralManager per adapter, their scan streams merged and tagged.
import Futures

/// A scan running on several adapters: one ``CentralManager`` per adapter on the same connection
/// (one object tree), each scanning; their results go to one stream.
final class MultiAdapterScan: Sendable {
    let managers: [CentralManager]
    let promise: StreamPromise<AdapterScanResult>

    init(managers: [CentralManager], promise: StreamPromise<AdapterScanResult>) {
        self.managers = managers
        self.promise = promise
    }

    /// Stops every adapter's scan and finishes the stream.
    func stop() {
        for m in managers { m.stopScanning() }
        promise.finish()
    }
}
