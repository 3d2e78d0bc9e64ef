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
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, promise: promise, onFailure: { [self] id in
            // Strong, like `start`: the queue drops both once the operation has run or failed.
            self.state.withLock { $0.abandonStart(id) }
        }) { [self] op in
            let begin = self.state.withLock { s -> (go: Bool, acquire: Bool) in
                if case .started = s.notify { return (false, false) }
                s.notify = .starting(op.id)
                return (true, flags.contains("notify") && !s.acquireUnsupported)
            }
            guard begin.go else { return op.succeed(self) }
            if let stale = replacedError(operation) {
                self.state.withLock { $0.abandonStart(op.id) }
                return op.fail(stale)
            }
            if begin.acquire {
                acquire(op)
            } else {
                startNotify(op, fallingBackFrom: nil)
            }
        }
        return promise.future
    }

    /// `AcquireNotify`; on a refusal that says the characteristic cannot be acquired, `StartNotify`.
    private func acquire(_ op: GattOperation<Characteristic>) {
        proxy.acquireNotify(timeout: GattOperationQueue.callTimeout(op.timeout ?? .seconds(10))) { [self] result in
            switch result {
            case .success(let (fd, mtu)):
                let socket = NotificationSocket(fd: fd, mtu: mtu, queue: Self.socketQueue, onData: { [weak self] data in
                    self?.notified(data)
                }, onClose: { [weak self] in
                    self?.socketClosed()
                })
                let kept = self.state.withLock { s -> Bool in
                    guard s.isStarting(op.id) else { return false }
                    s.notify = .started(.acquiredSocket, socket)
                    s.endedByBlueZ = false
                    return true
                }
                if kept {
                    socket.start()
                    op.succeed(self)
                } else {
                    // The operation ended without this answer (deadline, link lost): closing
                    // the socket is what releases the notification in BlueZ.
                    socket.close()
                    op.fail(.disconnected)
                }
            case .failure(let e) where Self.acquireRefusalFallsBack(e.kind):
                BlueZLog.debug("\(path) AcquireNotify refused (\(e)); trying StartNotify")
                guard self.state.withLock({ $0.isStarting(op.id) }) else {
                    return op.fail(e)
                }
                startNotify(op, fallingBackFrom: e)
            case .failure(let e):
                self.state.withLock { $0.abandonStart(op.id) }
                op.fail(e)
            }
        }
    }

    /// Whether a refused `AcquireNotify` is worth a `StartNotify`: not when the refusal is about
    /// the link or the moment (it would be refused alike, or must be retried as it is), nor when
    /// the notifications are held already (`NotPermitted` "Notify acquired": StartNotify is
    /// refused the same way while a socket holds them).
    static func acquireRefusalFallsBack(_ kind: BlueZErrorKind) -> Bool {
        ![.timeout, .serviceUnavailable, .disconnected, .notConnected, .inProgress, .notPermitted].contains(kind)
    }

    /// `StartNotify`. After a refused `AcquireNotify` (`refusal`), a success makes StartNotify
    /// the characteristic's way from then on.
    private func startNotify(_ op: GattOperation<Characteristic>, fallingBackFrom refusal: BlueZError?) {
        proxy.startNotify(timeout: GattOperationQueue.callTimeout(op.timeout ?? .seconds(10))) { [self] result in
            switch result {
            case .success:
                let kept = self.state.withLock { s -> Bool in
                    if refusal != nil { s.acquireUnsupported = true }
                    guard s.isStarting(op.id) else { return false }
                    s.notify = .started(.propertiesChanged, nil)
                    s.endedByBlueZ = false
                    return true
                }
                if kept { return op.succeed(self) }
                // The operation ended without this answer: BlueZ now notifies a session nobody
                // follows. Turn it off in turn, unless notifications were started again since.
                op.fail(.disconnected)
                stopLateSession()
            case .failure(let e):
                self.state.withLock { $0.abandonStart(op.id) }
                op.fail(e)
            }
        }
    }

    /// Ends a `StartNotify` session whose start operation ended before BlueZ answered it (queued
    /// like any operation, so that it cannot overtake a start made after it).
    private func stopLateSession() {
        guard peripheral.linkIsUp else { return }
        let operation = "Characteristic.startNotifying (org.bluez.GattCharacteristic1.StopNotify, late answer)"
        let proxy = self.proxy
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: .seconds(10), promise: Promise<Void>()) { [self] op in
            guard case .off = self.state.withLock({ $0.notify }) else { return op.succeed(()) }
            proxy.stopNotify(timeout: GattOperationQueue.callTimeout(.seconds(10))) { result in op.complete(result) { _ in } }
        }
    }

    /// Turns notifications off (closes the acquired socket, or `org.bluez.GattCharacteristic1.StopNotify`)
    /// and finishes every update stream.
    ///
    /// The update streams finish at once. Turning notifications off in BlueZ is queued with the
    /// device's other GATT operations, so a ``startNotifying(timeout:resubscribeOnReconnect:)``
    /// called before it has run (and one called after it waits): `start; stop` leaves
    /// notifications off. After closing an acquired socket it completes when BlueZ reports the
    /// notification released (`NotifyAcquired` false), so a start issued next is not refused.
    public func stopNotifying(timeout: Duration = .seconds(10)) -> Future<Characteristic> {
        let operation = "Characteristic.stopNotifying (org.bluez.GattCharacteristic1.StopNotify)"
        let promise = Promise<Characteristic>()
        let streams = self.state.withLock { s -> [StreamPromise<NotificationUpdate>] in
            s.resubscribe = false
            s.wantsResubscription = false
            return s.streams.removeAll()
        }
        for stream in streams { stream.finish() }
        guard peripheral.linkIsUp else {
            // The link took the notifications with it; the queue is empty (failed with the link).
            let socket = self.state.withLock { s -> NotificationSocket? in
                defer { s.notify = .off }
                if case .started(_, let socket?) = s.notify { return socket }
                return nil
            }
            socket?.close()
            promise.success(self)
            return promise.future
        }
        let proxy = self.proxy
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, promise: promise) { [self] op in
            let was = self.state.withLock { s -> Notify in
                defer { s.notify = .off }
                return s.notify
            }
            switch was {
            case .off, .starting:
                op.succeed(self)
            case .started(_, let socket?):
                socket.close()
                awaitNotifyReleased(op)
            case .started(_, nil):
                proxy.stopNotify(timeout: GattOperationQueue.callTimeout(timeout)) { result in op.complete(result) { _ in self } }
            }
        }
        return promise.future
    }

    /// Ends `op` once BlueZ reports the acquired notification released (`NotifyAcquired` not
    /// true): it releases it when it sees the socket's end, a moment after the close.
    private func awaitNotifyReleased(_ op: GattOperation<Characteristic>) {
        let path = self.path, tree = peripheral.tree
        peripheral.wait(timeout: op.timeout ?? .seconds(10), check: { [self] in
            guard tree.properties(at: path, interface: GattCharacteristic1.interface)?["NotifyAcquired"] != .bool(true) else { return false }
            op.succeed(self)
            return true
        }, fail: { op.fail($0) }, onTimeout: {
            op.fail(.timeout, "BlueZ still reports NotifyAcquired after the notification socket was closed")
        })
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
            case .starting(_), .started(.propertiesChanged, _): return s.streams.deliver(update)
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
