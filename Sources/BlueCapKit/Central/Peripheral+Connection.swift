// Peripheral: connect / reconnect / disconnect / terminate and the ConnectionEvent stream,
// driven by ConnectionStateMachine.
import BlueZ
import DBus
import Foundation
import Futures

/// One element of a ``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
/// stream: the peripheral and what happened to its connection.
public typealias ConnectionUpdate = (peripheral: Peripheral, connectionEvent: ConnectionEvent)

extension Peripheral {
    typealias Machine = ConnectionStateMachine

    /// How many times a transient BlueZ error (`InProgress`, `le-connection-abort-by-local`,
    /// "Software caused connection abort") is retried inside one connection attempt.
    static var transientRetryLimit: Int { Machine.transientRetryLimit }

    /// Connects (`org.bluez.Device1.Connect`) and reports the link's life as ``ConnectionEvent``s:
    /// `.connect`; `.timeout` when `Connect` does not complete within `connectionTimeout` (the
    /// pending connection is cancelled with `Device1.Disconnect`; call ``reconnect(withDelay:)``);
    /// `.disconnect` when the link drops (call ``reconnect(withDelay:)``), or as soon as a GATT
    /// call is answered "Not connected" (the operation fails with `.notConnected`): bluetoothd
    /// answers so once its ATT bearer is gone, after a peer left a request unanswered for 30 s,
    /// while `Device1.Connected` still reads true for seconds; the library then takes that
    /// half-open link down itself (`Device1.Disconnect`), so a reconnection starts from a
    /// clean state. `.forceDisconnect` after
    /// ``disconnect()``; `.giveUp` instead of `.timeout` once timeouts exceed `timeoutRetries`, or
    /// instead of `.disconnect` once disconnects exceed `disconnectRetries` (call ``terminate()``).
    ///
    /// Counting follows BlueCap: with `timeoutRetries: 2` the first two timeouts yield `.timeout`
    /// and the third `.giveUp`; with the default 0 the first timeout (or drop) yields `.giveUp`.
    ///
    /// Transient BlueZ errors are retried inside the attempt with backoff; other `Connect`
    /// failures are pushed as a failed ``PeripheralError`` (the stream goes on). An attempt that
    /// finds no device object (bluetoothd removed it after the link dropped, as it does for an
    /// unpaired device it no longer hears, or another client called `Adapter1.RemoveDevice`)
    /// looks for the device with a discovery for its address and connects once the object is
    /// back: `.connect` when the peer returns within `connectionTimeout`, else `.timeout`. A new `connect`
    /// finishes the previous stream. The stream keeps its last `capacity` events for replay.
    public func connect(timeoutRetries: Int = 0, disconnectRetries: Int = 0, connectionTimeout: Duration = .seconds(10),
                        capacity: Int = 10) -> FutureStream<ConnectionUpdate> {
        let promise = StreamPromise<ConnectionUpdate>(capacity: max(1, capacity))
        let policy = Machine.Policy(timeoutRetries: timeoutRetries, disconnectRetries: disconnectRetries,
                                    connectionTimeout: connectionTimeout)
        feed(.connectRequested(policy, deviceConnected: false), newStream: promise)
        return promise.stream
    }

    /// Tries to connect again after `delay` (after a `.timeout`, `.disconnect` or failure).
    /// Does nothing unless a ``connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
    /// stream exists and the peripheral is neither connected nor connecting. Called while
    /// ``disconnect()`` is still taking the link down, it connects once the link is down: the
    /// stream yields `.forceDisconnect`, then `.connect`. Likewise a `Device1.Disconnect` the
    /// library sent (after a `.timeout`, or to take down a link GATT found gone) is answered
    /// before `Connect` goes out: bluetoothd defers a connected device's Disconnect for 2 s and
    /// meanwhile answers `Connect` at once, for the link about to go.
    public func reconnect(withDelay delay: Duration = .zero) {
        feed(.reconnectRequested(delay: delay))
    }

    /// Disconnects (`org.bluez.Device1.Disconnect`); the stream then yields `.forceDisconnect`.
    /// Idempotent; a pending connection attempt is cancelled, and a link BlueZ reports up that
    /// no attempt of ours made (another client's, or one that came up after ours was cancelled) is
    /// brought down too.
    public func disconnect() {
        feed(.disconnectRequested(deviceConnected: false))
    }

    /// Disconnects, forgets the peripheral (the manager no longer lists it), finishes the
    /// connection stream and fails every pending operation with `.terminated`. Never blocks.
    /// From then on ``isTerminated`` is true and every state reads as none: not connected, not
    /// paired, no services, no characteristic notifying (see ``Peripheral``).
    public func terminate() {
        let before = pairingState
        feed(.terminate(deviceConnected: false))
        if pairingState != before { pairingPropertiesChanged() }
    }

    // MARK: - Events from BlueZ

    /// `Device1.Connected` changed (owner thread).
    func connectedChanged(_ connected: Bool) {
        feed(connected ? .linkUp : .linkDown(serviceGone: false))
    }

    /// The device object went away (bluetoothd restarted, device removed).
    func deviceRemoved() {
        feed(.deviceRemoved(serviceGone: tree.status.owner == nil))
    }

    // MARK: - Driving the state machine

    /// Feeds `event` to the state machine under the lock (events that carry `Device1.Connected`
    /// get the cached value there), then performs its actions outside the lock. `newStream` is
    /// the stream of a `connect(...)` call, installed by ``ConnectionStateMachine/Action/openStream``.
    /// An attempt's timer that the transition ended is taken out under the same lock.
    func feed(_ event: Machine.Event, newStream: StreamPromise<ConnectionUpdate>? = nil, connectError: BlueCapError? = nil) {
        let (actions, stream, previous, endedTimer, releaseSlot, linkChange) = state.withLock {
            s -> ([Machine.Action], StreamPromise<ConnectionUpdate>?, StreamPromise<ConnectionUpdate>?, ScheduledTask?, SlotChange, Bool?) in
            let connected = s.properties.connected == true && s.connection.deviceConnectedIsCurrent
            let actions = s.connection.handle(Self.withDeviceConnected(event, connected))
            var previous: StreamPromise<ConnectionUpdate>?
            if actions.contains(.openStream) {
                previous = s.connectPromise
                s.connectPromise = newStream
            }
            var ended: ScheduledTask?
            if actions.contains(.cancelAttemptTimer), let timer = s.attemptTimer {
                s.attemptTimer = nil
                ended = timer.task
            }
            let stream = s.connectPromise
            if case .tearDown = actions.last { s.connectPromise = nil }
            // The slot is held while an attempt is under way or the link is ours: asked for by
            // `sendConnect`, taken over when a link made otherwise (`ConnectDevice`, another
            // client, before the stream) becomes ours, given back when neither is true.
            var slot = SlotChange.none
            switch s.connection.phase {
            case .connected, .disconnecting: if !s.slotHeld { s.slotHeld = true; slot = .adopt }
            case .connecting: break
            case .unopened, .idle, .terminated: if s.slotHeld { s.slotHeld = false; slot = .release }
            }
            // The slot's link counts as up while the machine is connected, whether or not BlueZ
            // signalled `Connected = true`.
            var link: Bool?
            let up = s.slotHeld && s.connection.phase == .connected
            if up != s.slotLinked { s.slotLinked = up; link = up }
            return (actions, stream, previous, ended, slot, link)
        }
        switch releaseSlot {
        case .adopt: session.connectionSlots.adopt(path)
        case .release: session.connectionSlots.release(path)
        case .none: break
        }
        if let linkChange { session.connectionSlots.linkIsUp(path, linkChange) }
        endedTimer?.cancel()
        previous?.finish()
        for action in actions { perform(action, stream: stream, newStream: newStream, connectError: connectError) }
        endDeviceSearchIfAttemptOver()
        session.foreignLinksMayHaveChanged()
    }

    /// `event` with `Device1.Connected` as cached (`connected`) where the event carries it.
    private static func withDeviceConnected(_ event: Machine.Event, _ connected: Bool) -> Machine.Event {
        switch event {
        case .connectRequested(let policy, _): return .connectRequested(policy, deviceConnected: connected)
        case .backoffElapsed(let attempt, _): return .backoffElapsed(attempt: attempt, deviceConnected: connected)
        case .disconnectRequested: return .disconnectRequested(deviceConnected: connected)
        case .terminate: return .terminate(deviceConnected: connected)
        default: return event
        }
    }

    /// What `feed` does with the session's connection slot after a transition.
    private enum SlotChange { case none, adopt, release }

    private func perform(_ action: Machine.Action, stream: StreamPromise<ConnectionUpdate>?,
                         newStream: StreamPromise<ConnectionUpdate>?, connectError: BlueCapError?) {
        switch action {
        case .openStream, .cancelAttemptTimer:
            break  // done under the lock by `feed`
        case .startAttemptTimer:
            break  // started once the attempt's connection slot is granted (`sendConnect`)
        case .rejectTerminated:
            newStream?.finish(throwing: PeripheralError(kind: .terminated, operation: "Peripheral.connect", path: identifier))
        case .sendConnect(let attempt, let timeout):
            let asking = state.withLock { s -> Bool in
                guard s.connection.phase == .connecting(attempt: attempt) else { return false }
                s.slotHeld = true
                return true
            }
            guard asking else { return }
            session.connectionSlots.acquire(path) { [weak self] granted in
                switch granted {
                case .success: self?.slotGranted(attempt: attempt, timeout: timeout)
                case .failure(let error): self?.feed(.connectReplied(attempt: attempt, .failed), connectError: error)
                }
            }
        case .sendDisconnect:
            let device = Device1(connection: connection, path: path)
            device.disconnect { [weak self] _ in self?.feed(.disconnectReplied(linkDown: false)) }
        case .disconnectLink:
            let device = Device1(connection: connection, path: path)
            device.disconnect { [weak self] result in
                // BlueZ answers once the link is down, and real bluetoothd emits Connected=false
                // after the reply (from an idle handler): record the drop now, so that a
                // `connect` right after `.forceDisconnect` does not see the stale Connected=true.
                guard let self else { return }
                if case .failure(let e) = result { BlueZLog.debug("\(self.identifier) Disconnect: \(e)") }
                self.state.withLock { s in
                    s.properties.connected = false
                    s.properties.servicesResolved = false
                    s.awaitingLinkDownSignal = true
                }
                self.feed(.disconnectReplied(linkDown: true))
            }
        case .scheduleBackoff(let attempt, let delay):
            after(delay) { [weak self] in self?.feed(.backoffElapsed(attempt: attempt, deviceConnected: false)) }
        case .scheduleReconnect(let delay):
            after(delay) { [weak self] in self?.feed(.reconnectRequested(delay: .zero)) }
        case .emit(let event):
            if event == .timeout || event == .giveUp { BlueZLog.debug("\(identifier) connection event \(event)") }
            stream?.success((self, event))
        case .reportConnectFailure:
            if let error = connectError, let bluez = error.bluez, error.kind != .noConnectionSlot {
                stream?.failure(PeripheralError(connectFailure(bluez), operation: Self.connectOperation, path: identifier))
            } else {
                stream?.failure(connectError ?? PeripheralError(connectFailure(nil), operation: Self.connectOperation, path: identifier))
            }
        case .failAttempt:
            stream?.failure(PeripheralError(kind: .serviceUnavailable, operation: Self.connectOperation, path: identifier,
                                            message: "bluetoothd left the bus"))
        case .awaitDevice(let attempt):
            awaitDevice(attempt: attempt)
        case .failPending(let serviceGone):
            let kind: PeripheralError.Kind = serviceGone ? .serviceUnavailable : .disconnected
            failPending(kind, message: serviceGone ? "bluetoothd left the bus" : "the link dropped")
            for c in state.withLock({ Array($0.characteristics.values) }) { c.linkLost(kind: kind) }
        case .resubscribe:
            resubscribeNotifications()
        case .tearDown(let disconnect):
            tearDown(disconnect: disconnect, stream: stream)
        }
    }

    private static let connectOperation = "Peripheral.connect (org.bluez.Device1.Connect)"

    /// The attempt's connection slot is held: starts its timer (on the first `Connect` of the
    /// attempt: a retry after a transient error keeps it) and calls `org.bluez.Device1.Connect`.
    func slotGranted(attempt: Int, timeout: Duration) {
        let (current, timerRunning, present, call) = state.withLock { s in
            let current = s.connection.phase == .connecting(attempt: attempt)
            if current { s.connectCall += 1 }
            return (current, s.attemptTimer?.attempt == attempt, s.objectPresent, s.connectCall)
        }
        guard current else { return }
        if !timerRunning { startAttemptTimer(attempt: attempt, timeout: timeout) }
        // No device object (bluetoothd removed it after the link dropped): nothing to connect
        // until the device is heard again.
        guard present else { return awaitDevice(attempt: attempt) }
        clearForeignPending()
        // The D-Bus call may outlive our own timer; our timer decides `.timeout`.
        Device1(connection: connection, path: path).connect(timeout: clock.backstop(for: timeout)) { [weak self] result in
            guard let self, self.state.withLock({ $0.connectCall == call }) else { return }
            switch result {
            case .success:
                self.feed(.connectReplied(attempt: attempt, .ok))
            case .failure(let error):
                // The object went away under the call (its InterfacesRemoved may come after
                // the answer): the attempt waits for the device as it would have from the signal.
                if error.kind == .unknownObject || !self.state.withLock({ $0.objectPresent }) {
                    return self.awaitDevice(attempt: attempt)
                }
                if error.isTransient { BlueZLog.debug("\(self.identifier) Connect: \(error); retrying after a backoff") }
                self.feed(.connectReplied(attempt: attempt, error.isTransient ? .transient : .failed),
                          connectError: PeripheralError(error, operation: Self.connectOperation, path: self.identifier))
            }
        }
    }

    /// Starts the attempt's timer; if the attempt has ended meanwhile (its answer came first),
    /// the timer is cancelled at once.
    private func startAttemptTimer(attempt: Int, timeout: Duration) {
        let timer = after(timeout) { [weak self] in self?.feed(.attemptTimedOut(attempt: attempt)) }
        let stale = state.withLock { s -> [ScheduledTask] in
            guard s.connection.phase == .connecting(attempt: attempt) else { return [timer] }
            let replaced = s.attemptTimer?.task
            s.attemptTimer = (attempt, timer)
            return replaced.map { [$0] } ?? []
        }
        for t in stale { t.cancel() }
    }

    /// `terminate()`: stops observing, fails everything pending with `.terminated`, forgets the
    /// GATT objects, disconnects when the link is up or being made, finishes the streams.
    private func tearDown(disconnect: Bool, stream: StreamPromise<ConnectionUpdate>?) {
        let observation = state.withLock { s -> ObjectTreeObservation? in
            defer { s.observation = nil }
            return s.observation
        }
        observation?.cancel()
        failPending(.terminated, message: "terminate() was called")
        let (chars, routes) = state.withLock { s -> ([Characteristic], [ObjectTreeObservation]) in
            let c = Array(s.characteristics.values)
            let r = Array(s.valueRoutes.values)
            s.services = [:]
            s.characteristics = [:]
            s.descriptors = [:]
            s.valueRoutes = [:]
            return (c, r)
        }
        for r in routes { r.cancel() }
        for c in chars { c.linkLost(kind: .terminated) }
        if disconnect {
            // Until BlueZ answers, the session counts the link as ours (not a foreign connection).
            let watch = session.foreignWatch, path = self.path
            watch.closing(path, true)
            Device1(connection: connection, path: path).disconnect { [session] _ in
                watch.closing(path, false)
                session.foreignLinksMayHaveChanged()
            }
        }
        stream?.finish()
        state.withLock { $0.rssiUpdates }?.finish()
        state.withLock { $0.servicesUpdates }?.finish()
        forget(self)
    }
}
