// CentralManager+Session: how a central manager ends when its session closes.
import BlueZ
import Futures

extension CentralManager: SessionMember {
    /// Stops scanning and monitoring, terminates every peripheral (`Device1.Disconnect` for the
    /// connected ones) and reports `.unsupported`; completes once the bus daemon has answered a
    /// round trip sent after those calls, so they left before the connection closes.
    func sessionClosing(timeout: Duration) -> Future<Void> {
        stopMonitoring()
        reset()
        tracker?.stop()
        let changed = inner.withLock { s -> Bool in
            defer { s.lastState = .unsupported }
            return s.lastState != .unsupported
        }
        if changed { stateStream.success(.unsupported) }
        let promise = Promise<Void>()
        guard let tree else {
            promise.success(())
            return promise.future
        }
        tree.synchronize { promise.success(()) }
        return promise.future
    }
}
