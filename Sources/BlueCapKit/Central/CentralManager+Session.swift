// CentralManager+Session: how a central manager ends when its session closes.
import BlueZ
import Futures

extension CentralManager: SessionMember {
    /// Stops scanning and monitoring, takes down the links of the connected peripherals
    /// (`org.bluez.Device1.Disconnect`, waiting for bluetoothd's answers, each within `timeout`),
    /// terminates every peripheral and reports `.unsupported`.
    func sessionClosing(timeout: Duration) -> Future<Void> {
        stopMonitoring()
        let linked = peripherals.filter(\.isConnected)
        let disconnects = linked.map { p -> Future<Void> in
            let promise = Promise<Void>()
            Device1(connection: p.connection, path: p.path).disconnect(timeout: timeout) { _ in promise.success(()) }
            return promise.future
        }
        return disconnects.sequence(context: .immediate).map(context: .immediate) { [weak self] _ in
            guard let self else { return }
            self.reset()
            self.tracker?.stop()
            let changed = self.inner.withLock { s -> Bool in
                defer { s.lastState = .unsupported }
                return s.lastState != .unsupported
            }
            if changed { self.stateStream.success(.unsupported) }
        }
    }
}
