// Peripheral: connect / reconnect / disconnect / terminate and the ConnectionEvent stream.
import BlueZ
import DBus
import Foundation
import Futures

/// One `connect(...)` stream and its counters.
struct ConnectSession {
    enum Phase: Equatable {
        case idle
        case connecting(attempt: Int)
        case connected
        case disconnecting
    }

    let promise: StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>
    let timeoutRetries: Int
    let disconnectRetries: Int
    let connectionTimeout: Duration
    var timeouts = 0
    var disconnects = 0
    var phase = Phase.idle
    var attempt = 0
    var transientRetries = 0
    var forced = false
}

extension Peripheral {
    /// How many times a transient BlueZ error (`InProgress`, `le-connection-abort-by-local`,
    /// "Software caused connection abort") is retried inside one connection attempt.
    static let transientRetryLimit = 4

    /// Connects (`org.bluez.Device1.Connect`) and reports the link's life as ``ConnectionEvent``s:
    /// `.connect`; `.timeout` when `Connect` does not complete within `connectionTimeout` (the
    /// pending connection is cancelled with `Device1.Disconnect`; call ``reconnect(withDelay:)``);
    /// `.disconnect` when the link drops (call ``reconnect(withDelay:)``); `.forceDisconnect` after
    /// ``disconnect()``; `.giveUp` instead of `.timeout` once timeouts exceed `timeoutRetries`, or
    /// instead of `.disconnect` once disconnects exceed `disconnectRetries` (call ``terminate()``).
    ///
    /// Counting follows BlueCap: with `timeoutRetries: 2` the first two timeouts yield `.timeout`
    /// and the third `.giveUp`; with the default 0 the first timeout (or drop) yields `.giveUp`.
    ///
    /// Transient BlueZ errors are retried inside the attempt with backoff; other `Connect`
    /// failures are pushed as a failed ``PeripheralError`` (the stream goes on). A new `connect`
    /// finishes the previous stream. The stream keeps its last `capacity` events for replay.
    public func connect(timeoutRetries: Int = 0, disconnectRetries: Int = 0, connectionTimeout: Duration = .seconds(10),
                        capacity: Int = 10) -> FutureStream<(peripheral: Peripheral, connectionEvent: ConnectionEvent)> {
        let promise = StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>(capacity: max(1, capacity))
        var session = ConnectSession(promise: promise, timeoutRetries: timeoutRetries, disconnectRetries: disconnectRetries,
                                     connectionTimeout: connectionTimeout)
        let (previous, terminated, alreadyConnected) = changeSession { s -> (ConnectSession?, Bool, Bool) in
            if s.terminated { return (nil, true, false) }
            let previous = s.session
            // Attempt numbers go on across sessions: a timer or a Connect reply of an earlier
            // session's attempt must never match an attempt of this one.
            session.attempt = previous?.attempt ?? 0
            let connected = s.properties.connected == true
            if connected { session.phase = .connected }
            s.session = session
            return (previous, false, connected)
        }
        previous?.promise.finish()
        if terminated {
            promise.finish(throwing: PeripheralError(kind: .terminated, operation: "Peripheral.connect", path: identifier))
        } else if alreadyConnected {
            promise.success((self, .connect))
        } else {
            startAttempt()
        }
        return promise.stream
    }

    /// Tries to connect again after `delay` (after a `.timeout`, `.disconnect` or failure).
    /// Does nothing unless a ``connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
    /// stream exists and the peripheral is neither connected nor connecting.
    public func reconnect(withDelay delay: Duration = .zero) {
        if delay > .zero {
            after(delay) { [weak self] in self?.startAttempt() }
        } else {
            startAttempt()
        }
    }

    /// Disconnects (`org.bluez.Device1.Disconnect`); the stream then yields `.forceDisconnect`.
    /// Idempotent; a pending connection attempt is cancelled.
    public func disconnect() {
        enum Action { case none, disconnectLink, cancelAttempt(StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>) }
        let action = changeSession { s -> Action in
            guard var session = s.session else { return s.properties.connected == true ? .disconnectLink : .none }
            switch session.phase {
            case .idle, .disconnecting:
                return .none
            case .connecting:
                session.phase = .idle
                session.attempt += 1
                s.session = session
                return .cancelAttempt(session.promise)
            case .connected:
                session.phase = .disconnecting
                session.forced = true
                s.session = session
                return .disconnectLink
            }
        }
        let device = Device1(connection: connection, path: path)
        switch action {
        case .none:
            return
        case .cancelAttempt(let promise):
            device.disconnect { _ in }
            promise.success((self, .forceDisconnect))
        case .disconnectLink:
            device.disconnect { [weak self] result in
                // BlueZ answers once the link is down, and real bluetoothd emits Connected=false
                // after the reply (from an idle handler): record the drop now, so that a
                // `connect` right after `.forceDisconnect` does not see the stale Connected=true.
                guard let self else { return }
                if case .failure(let e) = result { BlueZLog.debug("\(self.identifier) Disconnect: \(e)") }
                self.state.withLock { s in
                    s.properties.connected = false
                    s.properties.servicesResolved = false
                }
                self.linkLost(serviceGone: false)
            }
        }
    }

    /// Disconnects, forgets the peripheral (the manager no longer lists it), finishes the
    /// connection stream and fails every pending operation with `.terminated`. Never blocks.
    public func terminate() {
        let (session, observation, wasConnected) = changeSession { s -> (ConnectSession?, ObjectTreeObservation?, Bool) in
            guard !s.terminated else { return (nil, nil, false) }
            s.terminated = true
            let session = s.session
            s.session = nil
            let o = s.observation
            s.observation = nil
            return (session, o, s.properties.connected == true || session.map { $0.phase != .idle } ?? false)
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
        if wasConnected { Device1(connection: connection, path: path).disconnect { _ in } }
        session?.promise.finish()
        state.withLock { $0.rssiUpdates }?.finish()
        forget(self)
    }

    // MARK: - State machine

    func startAttempt() {
        let started = changeSession { s -> (attempt: Int, timeout: Duration)? in
            guard !s.terminated, var session = s.session, session.phase == .idle else { return nil }
            session.attempt += 1
            session.phase = .connecting(attempt: session.attempt)
            session.transientRetries = 0
            session.forced = false
            s.session = session
            return (session.attempt, session.connectionTimeout)
        }
        guard let (attempt, timeout) = started else { return }
        let timer = after(timeout) { [weak self] in self?.connectTimedOut(attempt: attempt) }
        // If the attempt has ended meanwhile, changeSession cancels this timer right away.
        let replaced = changeSession { s -> ScheduledTask? in
            let replaced = s.attemptTimer?.task
            s.attemptTimer = (attempt, timer)
            return replaced
        }
        replaced?.cancel()
        sendConnect(attempt: attempt, timeout: timeout)
    }

    /// Runs `body` on the state under its lock: every change of the connection session goes
    /// through here. Afterwards, when the attempt the timer belongs to is over (connected,
    /// failed, timed out, cancelled, terminated, replaced), the timer is taken out and cancelled
    /// outside the lock, so that it does not wait for its deadline.
    func changeSession<R>(_ body: (inout State) -> R) -> R {
        let (result, ended) = state.withLock { s -> (R, ScheduledTask?) in
            let result = body(&s)
            guard let timer = s.attemptTimer, s.session?.phase != .connecting(attempt: timer.attempt) else { return (result, nil) }
            s.attemptTimer = nil
            return (result, timer.task)
        }
        ended?.cancel()
        return result
    }

    private func sendConnect(attempt: Int, timeout: Duration) {
        // The D-Bus call may outlive our own timer; our timer decides `.timeout`.
        Device1(connection: connection, path: path).connect(timeout: timeout + .seconds(2)) { [weak self] result in
            self?.connectAnswered(attempt: attempt, result)
        }
    }

    private func connectTimedOut(attempt: Int) {
        let event = changeSession { s -> (ConnectionEvent, StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>)? in
            guard var session = s.session, session.phase == .connecting(attempt: attempt) else { return nil }
            session.phase = .idle
            session.timeouts += 1
            s.session = session
            return (session.timeouts > session.timeoutRetries ? .giveUp : .timeout, session.promise)
        }
        guard let (e, promise) = event else { return }
        BlueZLog.debug("\(identifier) connect attempt \(attempt) timed out")
        Device1(connection: connection, path: path).disconnect { _ in }  // cancels bluetoothd's pending connection
        promise.success((self, e))
    }

    private func connectAnswered(attempt: Int, _ result: Result<Void, BlueZError>) {
        enum Next { case none, connected, retry(Duration, Duration), failed(BlueZError) }
        let (next, promise) = changeSession { s -> (Next, StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>?) in
            guard var session = s.session, session.phase == .connecting(attempt: attempt) else { return (.none, nil) }
            switch result {
            case .success:
                session.phase = .connected
                s.session = session
                return (.connected, session.promise)
            case .failure(let error) where error.isTransient && session.transientRetries < Self.transientRetryLimit:
                session.transientRetries += 1
                s.session = session
                let backoff = Duration.milliseconds(50 << session.transientRetries)
                return (.retry(backoff, session.connectionTimeout), session.promise)
            case .failure(let error):
                session.phase = .idle
                s.session = session
                return (.failed(error), session.promise)
            }
        }
        switch next {
        case .none: return
        case .connected: emitConnect(promise)
        case .retry(let backoff, let timeout):
            if case .failure(let e) = result { BlueZLog.debug("\(identifier) Connect: \(e); retrying in \(backoff)") }
            after(backoff) { [weak self] in self?.retryConnect(attempt: attempt, timeout: timeout) }
        case .failed(let error):
            promise?.failure(PeripheralError(error, operation: "Peripheral.connect (org.bluez.Device1.Connect)", path: identifier))
        }
    }

    /// After a transient error's backoff: connected meanwhile → `.connect`; else `Connect` again.
    private func retryConnect(attempt: Int, timeout: Duration) {
        let (stillConnecting, connected, promise) = changeSession { s -> (Bool, Bool, StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>?) in
            guard var session = s.session, session.phase == .connecting(attempt: attempt) else { return (false, false, nil) }
            if s.properties.connected == true {
                session.phase = .connected
                s.session = session
                return (true, true, session.promise)
            }
            return (true, false, session.promise)
        }
        guard stillConnecting else { return }
        if connected { emitConnect(promise) } else { sendConnect(attempt: attempt, timeout: timeout) }
    }

    /// Yields `.connect`, then turns notifications that were on before the drop on again.
    private func emitConnect(_ promise: StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>?) {
        promise?.success((self, .connect))
        resubscribeNotifications()
    }

    /// `Device1.Connected` changed (owner thread).
    func connectedChanged(_ connected: Bool) {
        if connected {
            let promise = changeSession { s -> StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>? in
                guard var session = s.session, case .connecting = session.phase else { return nil }
                session.phase = .connected
                s.session = session
                return session.promise
            }
            if let promise { emitConnect(promise) }
        } else {
            linkLost(serviceGone: false)
        }
    }

    /// The device object went away (bluetoothd restarted, device removed).
    func deviceRemoved() {
        let serviceGone = tree.status.owner == nil
        let failedAttempt = changeSession { s -> StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>? in
            guard var session = s.session, case .connecting = session.phase else { return nil }
            session.phase = .idle
            s.session = session
            return session.promise
        }
        if let failedAttempt {
            failedAttempt.failure(PeripheralError(kind: serviceGone ? .serviceUnavailable : .disconnected,
                                                  operation: "Peripheral.connect (org.bluez.Device1.Connect)", path: identifier,
                                                  message: serviceGone ? "bluetoothd left the bus" : "the device object was removed"))
        }
        linkLost(serviceGone: serviceGone)
    }

    /// The link is down: yields `.forceDisconnect`, `.disconnect` or `.giveUp`; fails pending work.
    func linkLost(serviceGone: Bool) {
        let result = changeSession { s -> (ConnectionEvent, StreamPromise<(peripheral: Peripheral, connectionEvent: ConnectionEvent)>)? in
            guard var session = s.session, session.phase == .connected || session.phase == .disconnecting else { return nil }
            let event: ConnectionEvent
            if session.forced {
                event = .forceDisconnect
            } else {
                session.disconnects += 1
                event = session.disconnects > session.disconnectRetries ? .giveUp : .disconnect
            }
            session.phase = .idle
            session.forced = false
            s.session = session
            return (event, session.promise)
        }
        let kind: PeripheralError.Kind = serviceGone ? .serviceUnavailable : .disconnected
        failPending(kind, message: serviceGone ? "bluetoothd left the bus" : "the link dropped")
        for c in state.withLock({ Array($0.characteristics.values) }) { c.linkLost(kind: kind) }
        if let (event, promise) = result { promise.success((self, event)) }
    }
}
