// CentralManager+Session: ending a central manager's work (shutdown), and how it ends when its
// session closes.
import BlueZ
import Futures

extension CentralManager {
    // MARK: - Shutdown

    /// Stops scanning and monitoring, takes down the links of the connected peripherals
    /// (`org.bluez.Device1.Disconnect`, waiting for bluetoothd's answers, each within `timeout`)
    /// and terminates every peripheral (``reset()``); completes on the manager's context once
    /// done, and never fails (a bluetoothd already gone is fine). The state stream goes on: the
    /// manager can scan again. The counterpart of ``PeripheralManager/shutdown()``, for a clean
    /// exit; ``reset()`` is the same without waiting.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(5)) -> Future<Void> {
        let promise = Promise<Void>()
        let context = self.context
        disconnectAndReset(timeout: timeout).onComplete(context: .immediate) { _ in context.execute { promise.success(()) } }
        return promise.future
    }

    /// ``shutdown(timeout:)``'s work, completing on the thread that ends it.
    /// (The scan stops with ``reset()``, after the links: as the session's close always did.)
    private func disconnectAndReset(timeout: Duration) -> Future<Void> {
        stopMonitoring()
        let linked = peripherals.filter(\.isConnected)
        let disconnects = linked.map { p -> Future<Void> in
            let promise = Promise<Void>()
            Device1(connection: p.connection, path: p.path).disconnect(timeout: timeout) { _ in promise.success(()) }
            return promise.future
        }
        return disconnects.sequence(context: .immediate).map(context: .immediate) { [weak self] _ in self?.reset() }
    }
}

extension CentralManager: SessionMember {
    /// ``shutdown(timeout:)``, then the manager stops following the adapter and reports
    /// `.unsupported`.
    func sessionClosing(timeout: Duration) -> Future<Void> {
        disconnectAndReset(timeout: timeout).map(context: .immediate) { [weak self] in
            guard let self else { return }
            self.tracker?.stop()
            let changed = self.inner.withLock { s -> Bool in
                defer { s.lastState = .unsupported }
                return s.lastState != .unsupported
            }
            if changed { self.stateStream.success(.unsupported) }
        }
    }
}
