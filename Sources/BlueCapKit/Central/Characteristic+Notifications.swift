// Characteristic: notifications through AcquireNotify (socket) or StartNotify (PropertiesChanged).
import BlueZ
import DBus
import Foundation
import Futures

extension Characteristic {
    /// Turns notifications on. When `Flags` contain "notify", `org.bluez.GattCharacteristic1.AcquireNotify`
    /// is tried first (a socket read on a dispatch source, one datagram per notification); when
    /// it is refused (or only "indicate" is offered) `StartNotify` is used and values arrive as
    /// `Value` PropertiesChanged. With `resubscribeOnReconnect`, notifications are turned on again
    /// after the peripheral reconnects and the update stream stays open across the drop.
    public func startNotifying(timeout: Duration = .seconds(10), resubscribeOnReconnect: Bool = true) -> Future<Characteristic> {
        let operation = "Characteristic.startNotifying (org.bluez.GattCharacteristic1.AcquireNotify/StartNotify)"
        let promise = Promise<Characteristic>()
        let flags = self.flags
        guard flags.contains("notify") || flags.contains("indicate") else {
            return failed(promise, .notSupported, operation, "Flags \(flags) have neither notify nor indicate")
        }
        if let down = peripheral.linkDown { return failed(promise, down, operation) }
        self.state.withLock { $0.resubscribe = resubscribeOnReconnect }
        // Open the update stream now: notifications arriving before the app subscribes are kept.
        _ = receiveNotificationUpdates()
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, start: { [self] finish in
            let begin = self.state.withLock { s -> (go: Bool, acquire: Bool) in
                if case .started = s.notify { return (false, false) }
                s.notify = .starting
                return (true, flags.contains("notify") && !s.acquireUnsupported)
            }
            guard begin.go else {
                promise.success(self)
                return finish()
            }
            if let stale = replacedError(operation) {
                self.state.withLock { s in if case .starting = s.notify { s.notify = .off } }
                promise.failure(stale)
                return finish()
            }
            if begin.acquire {
                acquire(timeout: timeout, operation: operation, promise: promise, finish: finish)
            } else {
                startNotify(timeout: timeout, operation: operation, promise: promise, finish: finish)
            }
        }, fail: { [self] error in
            // Strong, like `start`: the queue drops both once the operation has run or failed.
            self.state.withLock { s in if case .starting = s.notify { s.notify = .off } }
            promise.failure(error)
        })
        return promise.future
    }

    private func acquire(timeout: Duration, operation: String, promise: Promise<Characteristic>, finish: @escaping @Sendable () -> Void) {
        proxy.acquireNotify(timeout: GattOperationQueue.callTimeout(timeout)) { [self] result in
            switch result {
            case .success(let (fd, mtu)):
                let socket = NotificationSocket(fd: fd, mtu: mtu, queue: Self.socketQueue, onData: { [weak self] data in
                    self?.notified(data)
                }, onClose: { [weak self] in
                    self?.socketClosed()
                })
                let kept = self.state.withLock { s -> Bool in
                    guard case .starting = s.notify else { return false }
                    s.notify = .started(.acquiredSocket, socket)
                    s.endedByBlueZ = false
                    return true
                }
                if kept {
                    socket.start()
                    promise.success(self)
                } else {
                    socket.close()
                    promise.failure(PeripheralError(kind: .disconnected, operation: operation, path: self.path.rawValue))
                }
                finish()
            case .failure(let e) where e.kind == .timeout || e.kind == .serviceUnavailable || e.kind == .disconnected:
                self.state.withLock { $0.notify = .off }
                promise.failure(PeripheralError(e, operation: operation, path: self.path.rawValue, timeout: timeout))
                finish()
            case .failure(let e):
                BlueZLog.debug("\(path) AcquireNotify refused (\(e)); using StartNotify")
                let starting = self.state.withLock { s -> Bool in
                    s.acquireUnsupported = true
                    if case .starting = s.notify { return true }
                    return false
                }
                // Timed out (or failed) while AcquireNotify was pending: nothing more to start.
                guard starting else { return finish() }
                startNotify(timeout: timeout, operation: operation, promise: promise, finish: finish)
            }
        }
    }

    private func startNotify(timeout: Duration, operation: String, promise: Promise<Characteristic>, finish: @escaping @Sendable () -> Void) {
        proxy.startNotify(timeout: GattOperationQueue.callTimeout(timeout)) { [self] result in
            switch result {
            case .success:
                self.state.withLock { s in if case .starting = s.notify { s.notify = .started(.propertiesChanged, nil); s.endedByBlueZ = false } }
                promise.success(self)
            case .failure(let e):
                self.state.withLock { $0.notify = .off }
                promise.failure(PeripheralError(e, operation: operation, path: self.path.rawValue, timeout: timeout))
            }
            finish()
        }
    }

    /// Turns notifications off (closes the acquired socket, or `org.bluez.GattCharacteristic1.StopNotify`)
    /// and finishes the update stream.
    public func stopNotifying(timeout: Duration = .seconds(10)) -> Future<Characteristic> {
        let operation = "Characteristic.stopNotifying (org.bluez.GattCharacteristic1.StopNotify)"
        let promise = Promise<Characteristic>()
        let (notify, updates) = self.state.withLock { s -> (Notify, StreamPromise<(characteristic: Characteristic, data: Data?)>?) in
            let n = s.notify
            s.notify = .off
            s.resubscribe = false
            s.wantsResubscription = false
            let u = s.updates
            s.updates = nil
            return (n, u)
        }
        updates?.finish()
        switch notify {
        case .off, .starting:
            promise.success(self)
        case .started(_, let socket?):
            socket.close()
            promise.success(self)
        case .started(.propertiesChanged, nil), .started(.acquiredSocket, nil):
            guard peripheral.linkIsUp else {
                promise.success(self)
                return promise.future
            }
            let proxy = self.proxy
            peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, start: { [self] finish in
                proxy.stopNotify(timeout: GattOperationQueue.callTimeout(timeout)) { result in
                    switch result {
                    case .success: promise.success(self)
                    case .failure(let e): promise.failure(PeripheralError(e, operation: operation, path: self.path.rawValue, timeout: timeout))
                    }
                    finish()
                }
            }, fail: { promise.failure($0) })
        }
        return promise.future
    }

    /// The notifications, as `(characteristic, data)`; one stream per characteristic, created by
    /// the first call (or by ``startNotifying(timeout:resubscribeOnReconnect:)`` with capacity 100)
    /// with `capacity`, the number of updates kept for replay to new subscribers.
    /// It finishes on ``stopNotifying(timeout:)``, and on a link drop unless re-subscription is on.
    public func receiveNotificationUpdates(capacity: Int = 100) -> FutureStream<(characteristic: Characteristic, data: Data?)> {
        self.state.withLock { s in
            if let u = s.updates { return u.stream }
            let u = StreamPromise<(characteristic: Characteristic, data: Data?)>(capacity: max(1, capacity))
            s.updates = u
            return u.stream
        }
    }

    // MARK: - Delivery

    /// A datagram on the acquired socket.
    func notified(_ data: Data) {
        let updates = self.state.withLock { s -> StreamPromise<(characteristic: Characteristic, data: Data?)>? in
            s.value = data
            return s.updates
        }
        updates?.success((self, data))
    }

    /// `Value` changed in a PropertiesChanged (StartNotify path, or after a read).
    func valueChanged(_ data: Data) {
        let updates = self.state.withLock { s -> StreamPromise<(characteristic: Characteristic, data: Data?)>? in
            s.value = data
            switch s.notify {
            case .starting, .started(.propertiesChanged, _): return s.updates
            default: return nil
            }
        }
        updates?.success((self, data))
    }

    /// BlueZ closed the acquired socket (link lost or notifications stopped remotely).
    func socketClosed() {
        self.state.withLock { s in
            if case .started(.acquiredSocket, _) = s.notify {
                s.notify = .off
                s.endedByBlueZ = true
            }
        }
    }

    /// Whether notifications should be turned on again after a reconnection.
    var wantsResubscription: Bool { self.state.withLock { $0.wantsResubscription } }

    /// The link dropped: notifications are off; the stream stays open when re-subscription is on.
    func linkLost(kind: PeripheralError.Kind) {
        let (socket, finishWith) = self.state.withLock { s -> (NotificationSocket?, StreamPromise<(characteristic: Characteristic, data: Data?)>?) in
            var socket: NotificationSocket?
            var wasOn = false
            switch s.notify {
            case .started(_, let sock): socket = sock; wasOn = true
            case .starting: wasOn = true
            case .off: break
            }
            s.notify = .off
            // The socket may have reported the end before the link change did.
            wasOn = wasOn || s.endedByBlueZ
            s.endedByBlueZ = false
            if wasOn && s.resubscribe && kind != .terminated {
                s.wantsResubscription = true
                return (socket, nil)
            }
            guard wasOn || kind == .terminated else { return (socket, nil) }
            let u = s.updates
            s.updates = nil
            return (socket, u)
        }
        socket?.close()
        finishWith?.finish(throwing: PeripheralError(kind: kind, operation: "Characteristic.receiveNotificationUpdates", path: self.path.rawValue))
    }

    /// Called after a successful re-subscription.
    func resubscribed() { self.state.withLock { $0.wantsResubscription = false } }
}
