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
    /// Called again after a reconnection (as BlueCap's example chain does), it starts afresh: the update
    /// streams opened before the link dropped finish, and the streams opened next take over
    /// (see ``receiveNotificationUpdates(capacity:)`` for who gets which notification).
    ///
    /// `via` chooses the transport: ``NotificationTransport/acquiredSocket`` (the default) tries
    /// `AcquireNotify` first as above; ``NotificationTransport/propertiesChanged`` always calls
    /// `org.bluez.GattCharacteristic1.StartNotify`, so that every notification is a D-Bus signal
    /// (what `bluez-record` can record and a replay can play back; it costs more CPU per
    /// notification). The choice holds for the re-subscriptions after a reconnection.
    public func startNotifying(timeout: Duration = .seconds(10), resubscribeOnReconnect: Bool = true,
                               via transport: NotificationTransport = .acquiredSocket) -> Future<Characteristic> {
        state.withLock { $0.preferredTransport = transport }
        return startNotifying(timeout: timeout, resubscribeOnReconnect: resubscribeOnReconnect, byApp: true)
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
        let (actions, replaced) = feed(.startRequested(resubscribeOnReconnect: resubscribeOnReconnect, byApp: byApp))
        for stream in replaced { stream.finish() }
        perform(actions)
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, promise: promise, onFailure: { [self] id in
            // Strong, like `start`: the queue drops both once the operation has run or failed.
            handle(.startAbandoned(op: id))
        }) { [self] op in
            let stale = replacedError(operation)
            let socketAllowed = state.withLock { $0.preferredTransport == .acquiredSocket }
            handle(.startRan(op: op.id, canAcquire: socketAllowed && flags.contains("notify"), replaced: stale != nil), op, replaced: stale)
        }
        return promise.future
    }

    /// `AcquireNotify` for the start operation `op`.
    private func acquire(_ op: GattOperation<Characteristic>) {
        proxy.acquireNotify(timeout: peripheral.clock.backstop(for: op.timeout ?? .seconds(10))) { [self] result in
            switch result {
            case .success(let (fd, mtu)):
                let socket = NotificationSocket(fd: fd, mtu: mtu, connection: peripheral.connection, onData: { [weak self] data in
                    self?.received(data, via: .notificationSocket)
                }, onClose: { [weak self] in
                    self?.socketClosed()
                })
                handle(.acquireReplied(op: op.id, .socket(socket)), op)
            case .failure(let e):
                if Notifications.acquireRefusalFallsBack(e.kind) {
                    BlueZLog.debug("\(path) AcquireNotify refused (\(e)); trying StartNotify")
                }
                handle(.acquireReplied(op: op.id, .refused(e.kind)), op, answer: e)
            }
        }
    }

    /// `StartNotify` for the start operation `op`, `afterRefusal` of its `AcquireNotify`.
    private func startNotify(_ op: GattOperation<Characteristic>, afterRefusal: Bool) {
        proxy.startNotify(timeout: peripheral.clock.backstop(for: op.timeout ?? .seconds(10))) { [self] result in
            switch result {
            case .success: handle(.startNotifyReplied(op: op.id, afterRefusal: afterRefusal, ok: true), op)
            case .failure(let e): handle(.startNotifyReplied(op: op.id, afterRefusal: afterRefusal, ok: false), op, answer: e)
            }
        }
    }

    /// Ends a `StartNotify` session whose start operation ended before BlueZ answered it (queued
    /// like any operation, so that it cannot overtake a start made after it).
    private func stopLateSession() {
        guard peripheral.linkIsUp else { return }
        let operation = "Characteristic.startNotifying (org.bluez.GattCharacteristic1.StopNotify, late answer)"
        // Nobody waits for it: its promise is dropped.
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: .seconds(10), promise: Promise<Characteristic>()) { [self] op in
            handle(.lateStopRan(op: op.id), op)
        }
    }

    /// Turns notifications off (closes the acquired socket, or `org.bluez.GattCharacteristic1.StopNotify`)
    /// and finishes every update stream.
    ///
    /// The update streams finish at once. Turning notifications off in BlueZ is queued with the
    /// device's other GATT operations, so a ``startNotifying(timeout:resubscribeOnReconnect:via:)``
    /// called before it has run (and one called after it waits): `start; stop` leaves
    /// notifications off. After closing an acquired socket it completes when BlueZ reports the
    /// notification released (`NotifyAcquired` false), so a start issued next is not refused.
    public func stopNotifying(timeout: Duration = .seconds(10)) -> Future<Characteristic> {
        let operation = "Characteristic.stopNotifying (org.bluez.GattCharacteristic1.StopNotify)"
        let promise = Promise<Characteristic>()
        let (actions, streams) = feed(.stopRequested(linkUp: peripheral.linkIsUp))
        for stream in streams { stream.finish() }
        for action in actions {
            switch action {
            case .queueStop:
                peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, promise: promise) { [self] op in
                    handle(.stopRan(op: op.id), op)
                }
            case .stopDone:
                promise.success(self)
            default:
                perform([action])
            }
        }
        return promise.future
    }

    /// Ends the stop operation `op` once BlueZ reports the acquired notification released
    /// (`NotifyAcquired` not true): it releases it when it sees the socket's end, a moment after the close.
    private func awaitNotifyReleased(_ op: GattOperation<Characteristic>) {
        let path = self.path, tree = peripheral.tree
        peripheral.wait(timeout: op.timeout ?? .seconds(10), check: { [self] in
            guard tree.properties(at: path, interface: GattCharacteristic1.interface)?["NotifyAcquired"] != .bool(true) else { return false }
            handle(.releaseEnded(op: op.id))
            op.succeed(self)
            return true
        }, fail: { [self] error in
            handle(.releaseEnded(op: op.id))
            op.fail(error)
        }, onTimeout: { [self] in
            handle(.releaseEnded(op: op.id))
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
    /// ``startNotifying(timeout:resubscribeOnReconnect:via:)``) the stream stays open through link
    /// drops and goes on after the library turns notifications on again. When the app calls
    /// `startNotifying` again after a drop (an app's chain re-running after `.reconnect`),
    /// the streams opened before the drop finish, and the stream opened next takes over: a chain
    /// that subscribes again after each reconnection gets each notification exactly once.
    ///
    /// Notifications that arrive after `startNotifying` while no stream is open (between its
    /// completion and the app's subscription, or between that call and the stream replacing a
    /// finished one) are held, at most 100, and handed to the stream opened next, so the app's
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

    /// How many notifications arrived (datagrams of the `org.bluez.GattCharacteristic1.AcquireNotify`
    /// socket, or `Value` changes after `StartNotify`), reached the update streams and were dropped
    /// (by which rule) since the characteristic was discovered; see ``NotificationCounts`` and
    /// ``NotificationDropRule``. Counted on the notification path without a lock of its own;
    /// reading takes the characteristic's lock and each open stream's.
    public var notificationCounts: NotificationCounts { self.state.withLock { $0.streams.counts() } }

    /// The number of open update streams (abandoned and finished ones are gone).
    var openUpdateStreamCount: Int { self.state.withLock { $0.streams.entries.count } }

    // MARK: - New values

    /// What carried a new value.
    enum ValueSource: Equatable {
        /// A `Value` PropertiesChanged: a StartNotify notification, or the change after a read
        /// (a notification while the state machine takes property values as such).
        case propertiesChanged
        /// A datagram on the AcquireNotify socket: always a notification.
        case notificationSocket
        /// The `ReadValue` reply: never a notification.
        case readReply
    }

    /// The one entry point of a new value, whatever carried it: ``value`` takes it, and when
    /// it is a notification the open update streams get it, in the order values arrive.
    func received(_ data: Data, via source: ValueSource) {
        let update: NotificationUpdate = (self, data)
        let streams = self.state.withLock { s -> [NotificationStreams<NotificationUpdate>.Entry] in
            s.value = data
            let isNotification = switch source {
            case .notificationSocket: true
            case .propertiesChanged: s.notifications.deliversPropertyValues
            case .readReply: false
            }
            return isNotification ? s.streams.deliver(update) : []
        }
        for entry in streams { entry.promise.success(update) }
    }

    /// BlueZ closed the acquired socket (link lost or notifications stopped remotely).
    func socketClosed() { handle(.socketClosedByRemote) }

    /// Whether notifications should be turned on again after a reconnection.
    var wantsResubscription: Bool { self.state.withLock { $0.notifications.resubscriptionPending } }

    /// The link dropped: notifications are off; the streams stay open when re-subscription is on.
    func linkLost(kind: PeripheralError.Kind) {
        let (actions, streams) = feed(.linkLost(terminated: kind == .terminated))
        perform(actions)
        for stream in streams { stream.finish(throwing: PeripheralError(kind: kind, operation: "Characteristic.receiveNotificationUpdates", path: self.path.rawValue)) }
    }

    /// Called after a successful re-subscription.
    func resubscribed() { handle(.resubscribed) }

    // MARK: - The state machine

    /// Feeds `event` to the notification state machine under the lock, and applies its actions
    /// on the update streams there (bookkeeping: no subscriber runs); returns the other actions,
    /// and the streams those removed, for the caller to perform and finish outside the lock.
    private func feed(_ event: Notifications.Event) -> (actions: [Notifications.Action], streams: [StreamPromise<NotificationUpdate>]) {
        self.state.withLock { s in
            var ended: [StreamPromise<NotificationUpdate>] = []
            let actions = s.notifications.handle(event).filter { action in
                switch action {
                case .replaceEarlierSessionStreams: ended += s.streams.appStarted()
                case .finishStreams: ended += s.streams.removeAll()
                case .endSession(let keepStreams): ended += s.streams.linkLost(keepStreams: keepStreams)
                default: return true
                }
                return false
            }
            return (actions, ended)
        }
    }

    /// Feeds an event that ends no update stream and performs its actions (see ``perform(_:_:answer:replaced:)``).
    private func handle(_ event: Notifications.Event, _ op: GattOperation<Characteristic>? = nil,
                        answer: BlueZError? = nil, replaced: PeripheralError? = nil) {
        let (actions, streams) = feed(event)
        assert(streams.isEmpty, "\(event) ended update streams")
        perform(actions, op, answer: answer, replaced: replaced)
    }

    /// Performs the machine's actions, in order, outside the lock. `op` is the operation that fed
    /// the event (the actions that name an operation name it), `answer` BlueZ's error answer to
    /// its call, `replaced` the error of an attribute that another one replaced.
    private func perform(_ actions: [Notifications.Action], _ op: GattOperation<Characteristic>? = nil,
                         answer: BlueZError? = nil, replaced: PeripheralError? = nil) {
        /// The operation the action names.
        func named(_ id: Int) -> GattOperation<Characteristic>? {
            assert(op?.id == id, "an action for operation \(id) after an event of \(String(describing: op?.id))")
            return op?.id == id ? op : nil
        }
        for action in actions {
            switch action {
            case .acquireNotify(let id):
                if let op = named(id) { acquire(op) }
            case .startNotify(let id, let afterRefusal):
                if let op = named(id) { startNotify(op, afterRefusal: afterRefusal) }
            case .stopNotify(let id):
                if let op = named(id) {
                    proxy.stopNotify(timeout: peripheral.clock.backstop(for: op.timeout ?? .seconds(10))) { result in op.complete(result) { _ in self } }
                }
            case .startSocket(let socket):
                socket.start()
            case .closeSocket(let socket):
                socket.close()
            case .awaitRelease(let id):
                if let op = named(id) { awaitNotifyReleased(op) }
            case .succeed(let id):
                named(id)?.succeed(self)
            case .fail(let id, let failure):
                guard let op = named(id) else { break }
                switch (failure, answer, replaced) {
                case (.answer, let answer?, _): op.fail(answer)
                case (.replaced, _, let replaced?): op.fail(replaced)
                case (.late, _, _), (.answer, nil, _), (.replaced, _, nil): op.fail(.disconnected)
                }
            case .stopLateSession:
                stopLateSession()
            case .replaceEarlierSessionStreams, .finishStreams, .endSession:
                break  // applied by `feed`, under the lock
            case .queueStop, .stopDone:
                break  // only `stopRequested` returns them, and `stopNotifying` performs them
            }
        }
    }
}
