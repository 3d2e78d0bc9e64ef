// Characteristic: notifications through AcquireNotify (socket) or StartNotify (PropertiesChanged).
import BlueZ
import DBus
import Foundation
import Futures

/// One notification (or indication) of a characteristic: the characteristic and the value.
public typealias NotificationUpdate = (characteristic: Characteristic, data: Data?)

extension Characteristic {
    /// Turns notifications on. When `Flags` contain "notify", `org.bluez.GattCharacteristic1.AcquireNotify`
    /// is tried first (a socket read on a dispatch source, one datagram per notification); when
    /// it is refused (or only "indicate" is offered) `StartNotify` is used and values arrive as
    /// `Value` PropertiesChanged. With `resubscribeOnReconnect`, notifications are turned on again
    /// after the peripheral reconnects and the update streams stay open across the drop.
    ///
    /// Called again after a reconnection (as the seed's chain does), it starts afresh: the update
    /// streams opened before the link dropped finish, and the streams opened next take over
    /// (see ``receiveNotificationUpdates(capacity:)`` for who gets which notification).
    public func startNotifying(timeout: Duration = .seconds(10), resubscribeOnReconnect: Bool = true) -> Future<Characteristic> {
        startNotifying(timeout: timeout, resubscribeOnReconnect: resubscribeOnReconnect, byApp: true)
    }

    /// `byApp` is false for the library's own re-subscription after a reconnection, which keeps
    /// the update streams as they are.
    func startNotifying(timeout: Duration, resubscribeOnReconnect: Bool, byApp: Bool) -> Future<Characteristic> {
        let operation = "Characteristic.startNotifying (org.bluez.GattCharacteristic1.AcquireNotify/StartNotify)"
        let promise = Promise<Characteristic>()
        let flags = self.flags
        guard flags.contains("notify") || flags.contains("indicate") else {
            return failed(promise, .notSupported, operation, "Flags \(flags) have neither notify nor indicate")
        }
        if let down = peripheral.linkDown { return failed(promise, down, operation) }
        let replaced = self.state.withLock { s -> [StreamPromise<NotificationUpdate>] in
            s.resubscribe = resubscribeOnReconnect
            return byApp ? s.streams.appStarted() : []
        }
        for stream in replaced { stream.finish() }
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
    /// and finishes every update stream.
    public func stopNotifying(timeout: Duration = .seconds(10)) -> Future<Characteristic> {
        let operation = "Characteristic.stopNotifying (org.bluez.GattCharacteristic1.StopNotify)"
        let promise = Promise<Characteristic>()
        let (notify, streams) = self.state.withLock { s -> (Notify, [StreamPromise<NotificationUpdate>]) in
            let n = s.notify
            s.notify = .off
            s.resubscribe = false
            s.wantsResubscription = false
            return (n, s.streams.removeAll())
        }
        for stream in streams { stream.finish() }
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

    /// A new stream of the characteristic's notifications, as `(characteristic, data)`, fed from
    /// this call on: each notification that arrives afterwards is delivered to it once, in order,
    /// and earlier ones are not replayed (read ``value`` for the latest). Every call returns its
    /// own stream; several streams each get every notification.
    ///
    /// `capacity` is the stream's replay buffer: a subscription made after values arrived gets
    /// the last `capacity` of them first (a subscriber more than `max(capacity, 1,000)` behind loses
    /// its oldest pending value, see `FutureStream`).
    ///
    /// Across reconnections: with re-subscription on (the default of
    /// ``startNotifying(timeout:resubscribeOnReconnect:)``) the stream stays open through link
    /// drops and goes on after the library turns notifications on again. When the app calls
    /// `startNotifying` again after a drop (the seed's chain re-running after `.reconnect`),
    /// the streams opened before the drop finish, and the stream opened next takes over: a chain
    /// that subscribes again after each reconnection gets each notification exactly once.
    ///
    /// Notifications that arrive after `startNotifying` while no stream is open (between its
    /// completion and the app's subscription, or between that call and the stream replacing a
    /// finished one) are held, at most 100, and handed to the stream opened next, so the seed's
    /// chain loses none.
    ///
    /// A stream finishes on ``stopNotifying(timeout:)`` and ``Peripheral/terminate()``, and with
    /// a failure when the link drops while re-subscription is off. A stream whose subscriptions
    /// were all cancelled (a cancel token, `first()`, `take(n)`, the end of a `for await` loop)
    /// is dropped at once; one that is never subscribed to stays until one of those ends, keeping
    /// at most `capacity` values.
    public func receiveNotificationUpdates(capacity: Int = 100) -> FutureStream<NotificationUpdate> {
        let (id, promise) = self.state.withLock { $0.streams.open(capacity: capacity) }
        // Once every subscription is cancelled no one will read it again: drop and finish it.
        promise.onAbandoned { [weak self] in
            self?.state.withLock { $0.streams.remove(id: id) }?.finish()
        }
        return promise.stream
    }

    /// The number of open update streams (abandoned and finished ones are gone).
    var openUpdateStreamCount: Int { self.state.withLock { $0.streams.entries.count } }

    // MARK: - Delivery

    /// A datagram on the acquired socket.
    func notified(_ data: Data) {
        let update: NotificationUpdate = (self, data)
        let streams = self.state.withLock { s -> [NotificationStreams<NotificationUpdate>.Entry] in
            s.value = data
            return s.streams.deliver(update)
        }
        for entry in streams { entry.promise.success(update) }
    }

    /// `Value` changed in a PropertiesChanged (StartNotify path, or after a read).
    func valueChanged(_ data: Data) {
        let update: NotificationUpdate = (self, data)
        let streams = self.state.withLock { s -> [NotificationStreams<NotificationUpdate>.Entry] in
            s.value = data
            switch s.notify {
            case .starting, .started(.propertiesChanged, _): return s.streams.deliver(update)
            default: return []
            }
        }
        for entry in streams { entry.promise.success(update) }
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

    /// The link dropped: notifications are off; the streams stay open when re-subscription is on.
    func linkLost(kind: PeripheralError.Kind) {
        let (socket, finishWith) = self.state.withLock { s -> (NotificationSocket?, [StreamPromise<NotificationUpdate>]) in
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
            let resubscribing = wasOn && s.resubscribe && kind != .terminated
            if resubscribing { s.wantsResubscription = true }
            return (socket, s.streams.linkLost(keepStreams: resubscribing || !(wasOn || kind == .terminated)))
        }
        socket?.close()
        for stream in finishWith { stream.finish(throwing: PeripheralError(kind: kind, operation: "Characteristic.receiveNotificationUpdates", path: self.path.rawValue)) }
    }

    /// Called after a successful re-subscription.
    func resubscribed() { self.state.withLock { $0.wantsResubscription = false } }
}
