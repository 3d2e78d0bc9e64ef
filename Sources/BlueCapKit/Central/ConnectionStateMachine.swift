// ConnectionStateMachine: a peripheral's connection life as a pure value: events in, actions out.

/// The connection logic of a ``Peripheral``, free of the bus, of time and of locks: ``handle(_:)``
/// takes an event (an app call, a `Device1` reply or signal, a timer that fired) and returns the
/// actions to perform, in order. `Peripheral` feeds it under its lock and performs the actions
/// outside the lock; timers are actions too (``Action/startAttemptTimer(attempt:timeout:)``,
/// ``Action/scheduleBackoff(attempt:delay:)``, ``Action/scheduleReconnect(delay:)``), whose
/// firing comes back as an event.
///
/// Counting follows BlueCap: with `timeoutRetries: 2` the first two timeouts yield `.timeout` and
/// the third `.giveUp`; the same for drops and `disconnectRetries`. Transient `Connect` errors are
/// retried inside the attempt after a backoff of 100, 200, 400, 800 ms (``transientRetryLimit``).
struct ConnectionStateMachine: Equatable {
    /// Where the connection is.
    enum Phase: Equatable {
        /// No `connect()` stream yet.
        case unopened
        /// A stream is open; no link and no attempt (after a timeout, a drop, a failure).
        case idle
        /// `Device1.Connect` of attempt `attempt` is pending.
        case connecting(attempt: Int)
        /// The link is up.
        case connected
        /// `disconnect()` sent `Device1.Disconnect`; the link is going down.
        case disconnecting
        /// `terminate()` was called: nothing happens any more.
        case terminated
    }

    /// The limits of one `connect()` stream.
    struct Policy: Equatable {
        var timeoutRetries: Int
        var disconnectRetries: Int
        var connectionTimeout: Duration
    }

    /// How `Device1.Connect` answered.
    enum ConnectReply: Equatable {
        case ok
        /// `InProgress`, `le-connection-abort-by-local`, … (``BlueZError/isTransient``).
        case transient
        case failed
    }

    /// What happened.
    enum Event: Equatable {
        /// `connect(...)`; `deviceConnected` is `Device1.Connected`.
        case connectRequested(Policy, deviceConnected: Bool)
        /// `reconnect(withDelay:)`, or its delay elapsed (then `delay` is zero).
        case reconnectRequested(delay: Duration)
        /// The attempt's timer fired.
        case attemptTimedOut(attempt: Int)
        /// `Device1.Connect` of `attempt` answered.
        case connectReplied(attempt: Int, ConnectReply)
        /// The backoff after a transient error elapsed.
        case backoffElapsed(attempt: Int, deviceConnected: Bool)
        /// `Device1.Connected` turned true.
        case linkUp
        /// A `Device1.Disconnect` we sent answered; `linkDown` when it was ``Action/disconnectLink``
        /// (its answer means the link is down).
        case disconnectReplied(linkDown: Bool)
        /// The link is down (`Connected` false, or our `Disconnect` answered); `serviceGone`
        /// when bluetoothd left the bus.
        case linkDown(serviceGone: Bool)
        /// A GATT call was answered "Not connected": bluetoothd's ATT bearer is down (after an
        /// ATT transaction timeout) while `Device1.Connected` may still read true for seconds.
        case gattLinkGone
        /// The device object went away.
        case deviceRemoved(serviceGone: Bool)
        /// `disconnect()`.
        case disconnectRequested(deviceConnected: Bool)
        /// `terminate()`.
        case terminate(deviceConnected: Bool)
    }

    /// What to do, in order.
    enum Action: Equatable {
        /// Install the new `connect()` stream; finish the previous one.
        case openStream
        /// Finish the new `connect()` stream at once with `.terminated`.
        case rejectTerminated
        /// Call `Device1.Connect` for `attempt` (the D-Bus timeout a little longer than ours).
        case sendConnect(attempt: Int, timeout: Duration)
        /// Call `Device1.Disconnect` without waiting (cancels a pending connection).
        case sendDisconnect
        /// Call `Device1.Disconnect`; its answer means the link is down (``Event/linkDown(serviceGone:)``).
        case disconnectLink
        /// Start the attempt's timer (fires ``Event/attemptTimedOut(attempt:)``).
        case startAttemptTimer(attempt: Int, timeout: Duration)
        /// The attempt is over: cancel its timer.
        case cancelAttemptTimer
        /// After `delay`, feed ``Event/backoffElapsed(attempt:deviceConnected:)``.
        case scheduleBackoff(attempt: Int, delay: Duration)
        /// After `delay`, feed ``Event/reconnectRequested(delay:)`` with zero.
        case scheduleReconnect(delay: Duration)
        /// Push a ``ConnectionEvent`` on the stream.
        case emit(ConnectionEvent)
        /// Push the `Connect` error on the stream (the stream goes on).
        case reportConnectFailure
        /// Push "bluetoothd left the bus" for the pending attempt.
        case failAttempt
        /// The device object is gone while `attempt` runs: look for the device (a discovery for
        /// its address) and send `Device1.Connect` once its object is back; the attempt's timer
        /// still decides `.timeout`.
        case awaitDevice(attempt: Int)
        /// The link is gone: fail pending operations, turn characteristics' notifications off.
        case failPending(serviceGone: Bool)
        /// Turn on again the notifications that were on before the link dropped.
        case resubscribe
        /// Tear everything down (`terminate()`), with `Device1.Disconnect` when `disconnect`.
        case tearDown(disconnect: Bool)
    }

    /// How many times a transient `Connect` error is retried inside one attempt.
    static let transientRetryLimit = 4

    private(set) var phase = Phase.unopened
    private(set) var policy = Policy(timeoutRetries: 0, disconnectRetries: 0, connectionTimeout: .seconds(10))
    /// The last attempt's number: it goes on across streams, so a timer or reply of an earlier
    /// attempt never matches a later one.
    private(set) var attempt = 0
    private(set) var timeouts = 0
    private(set) var disconnects = 0
    private(set) var transientRetries = 0
    /// The link goes down because of `disconnect()`.
    private(set) var forced = false
    /// `Device1.Disconnect` calls sent and not answered yet. BlueZ handles a device's calls in
    /// order: while one is pending, a link that comes up belongs to a connection attempt made
    /// before it (one that `disconnect()` cancelled), and that Disconnect is about to take it
    /// down. `Connected` true is then neither the current attempt's success nor a usable link.
    private(set) var disconnectsInFlight = 0
    /// `reconnect()` (or `connect()`) was called while `disconnect()` was taking the link down,
    /// or while a `Device1.Disconnect` of ours was unanswered: the attempt starts once the link
    /// is down or that Disconnect answered. bluetoothd defers a connected device's Disconnect (2 s,
    /// its DISCONNECT_TIMER) and answers a `Connect` meanwhile at once, as already connected: the
    /// "new" connection would be the old link, which the Disconnect then takes down.
    private(set) var reconnectPending = false
    /// The current attempt's `Device1.Connect` is unanswered. `Connected` turning true meanwhile
    /// is not yet a usable link: bluetoothd sets it on the kernel's connection event, before the
    /// ATT channel is up and while the kernel still reads the peer's features, and answers
    /// `Connect` once the ATT channel is connected. A `Pair` sent in between is refused
    /// ("InProgress") or never answered (the kernel: "security requested but not available"), so
    /// the answer decides when the link is reported up.
    private(set) var connectPending = false

    init() {}

    /// A machine in a given state (for tests).
    init(phase: Phase, policy: Policy, attempt: Int = 0, timeouts: Int = 0, disconnects: Int = 0,
         transientRetries: Int = 0, forced: Bool = false, disconnectsInFlight: Int = 0, reconnectPending: Bool = false,
         connectPending: Bool = false) {
        self.phase = phase
        self.policy = policy
        self.attempt = attempt
        self.timeouts = timeouts
        self.disconnects = disconnects
        self.transientRetries = transientRetries
        self.forced = forced
        self.disconnectsInFlight = disconnectsInFlight
        self.reconnectPending = reconnectPending
        self.connectPending = connectPending
    }

    /// Whether the link is up as far as the connection's events go.
    var isConnected: Bool { phase == .connected }
    var isTerminated: Bool { phase == .terminated }
    /// Whether `Device1.Connected` describes a link that stays: no Disconnect of ours is pending
    /// (see ``disconnectsInFlight``).
    var deviceConnectedIsCurrent: Bool { disconnectsInFlight == 0 }

    // MARK: - Transitions

    /// Applies `event`; returns the actions to perform, in order. Leaving an attempt always
    /// cancels its timer first.
    mutating func handle(_ event: Event) -> [Action] {
        let before = phase
        var actions = transition(event)
        disconnectsInFlight += actions.count { $0 == .sendDisconnect || $0 == .disconnectLink }
        if actions.contains(where: { if case .sendConnect = $0 { true } else { false } }) {
            connectPending = true
        } else if case .connecting = phase {} else {
            connectPending = false
        }
        if case .connecting(let a) = before, phase != .connecting(attempt: a), !actions.contains(.cancelAttemptTimer) {
            actions.insert(.cancelAttemptTimer, at: 0)
        }
        return actions
    }

    private mutating func transition(_ event: Event) -> [Action] {
        if phase == .terminated {
            if case .connectRequested = event { return [.rejectTerminated] }
            return []
        }
        switch event {
        case .connectRequested(let policy, let deviceConnected):
            self.policy = policy
            timeouts = 0
            disconnects = 0
            forced = false
            if deviceConnected {
                phase = .connected
                return [.openStream, .emit(.connect)]
            }
            phase = .idle
            reconnectPending = false
            if disconnectsInFlight > 0 {
                reconnectPending = true
                return [.openStream]
            }
            return [.openStream] + startAttempt()
        case .reconnectRequested(let delay):
            if delay > .zero { return phase == .unopened ? [] : [.scheduleReconnect(delay: delay)] }
            if phase == .disconnecting || (phase == .idle && disconnectsInFlight > 0) {
                reconnectPending = true
                return []
            }
            return phase == .idle ? startAttempt() : []
        case .attemptTimedOut(let a):
            guard phase == .connecting(attempt: a) else { return [] }
            phase = .idle
            timeouts += 1
            return [.sendDisconnect, .emit(timeouts > policy.timeoutRetries ? .giveUp : .timeout)]
        case .connectReplied(let a, let reply):
            guard phase == .connecting(attempt: a) else { return [] }
            connectPending = false
            switch reply {
            case .ok:
                return connected()
            case .transient where transientRetries < Self.transientRetryLimit:
                transientRetries += 1
                return [.scheduleBackoff(attempt: a, delay: .milliseconds(50 << transientRetries))]
            case .transient, .failed:
                phase = .idle
                return [.reportConnectFailure]
            }
        case .backoffElapsed(let a, let deviceConnected):
            guard phase == .connecting(attempt: a) else { return [] }
            return deviceConnected ? connected() : [.sendConnect(attempt: a, timeout: policy.connectionTimeout)]
        case .linkUp:
            // With a Disconnect of ours pending, the link is a cancelled attempt's; with the
            // attempt's Connect pending, the link is not ready yet (see `connectPending`): the
            // current attempt's Connect reply decides. Between a transient error's retries the
            // link coming up is the attempt's success.
            guard case .connecting = phase, disconnectsInFlight == 0, !connectPending else { return [] }
            return connected()
        case .disconnectReplied(let linkDown):
            disconnectsInFlight = max(0, disconnectsInFlight - 1)
            var actions = linkDown ? linkLost(serviceGone: false) : []
            // An attempt asked for while this Disconnect was under way starts now.
            if reconnectPending, disconnectsInFlight == 0, phase == .idle {
                reconnectPending = false
                actions += startAttempt()
            }
            return actions
        case .linkDown(let serviceGone):
            return linkLost(serviceGone: serviceGone)
        case .gattLinkGone:
            // The link is down as far as GATT goes: report it now and take bluetoothd's half-open
            // link down (its Disconnect goes out before anything the app does on `.disconnect`).
            guard phase == .connected else { return [] }
            return [.disconnectLink] + linkLost(serviceGone: false)
        case .deviceRemoved(let serviceGone):
            guard case .connecting(let a) = phase else { return linkLost(serviceGone: serviceGone) }
            guard !serviceGone else {
                phase = .idle
                return [.failAttempt, .failPending(serviceGone: true)]
            }
            // bluetoothd removed the device object (an unpaired device after its link dropped,
            // another client's RemoveDevice): the attempt goes on, looking for the device until
            // it is heard again or the attempt's timer fires.
            return [.failPending(serviceGone: false), .awaitDevice(attempt: a)]
        case .disconnectRequested(let deviceConnected):
            switch phase {
            case .unopened, .idle:
                // No link of ours, but BlueZ says the device is connected (connected before the
                // stream, or by another client): `disconnect()` still brings the link down. An
                // attempt waiting for a Disconnect's answer is called off.
                reconnectPending = false
                return deviceConnected ? [.disconnectLink] : []
            case .connecting:
                phase = .idle
                attempt += 1  // a late reply or timer of the cancelled attempt matches nothing
                return [.sendDisconnect, .emit(.forceDisconnect)]
            case .connected:
                phase = .disconnecting
                forced = true
                reconnectPending = false
                return [.disconnectLink]
            case .disconnecting, .terminated:
                return []
            }
        case .terminate(let deviceConnected):
            let linkBusy = deviceConnected || (phase != .idle && phase != .unopened)
            phase = .terminated
            return [.tearDown(disconnect: linkBusy)]
        }
    }

    private mutating func startAttempt() -> [Action] {
        attempt += 1
        phase = .connecting(attempt: attempt)
        transientRetries = 0
        forced = false
        return [.startAttemptTimer(attempt: attempt, timeout: policy.connectionTimeout),
                .sendConnect(attempt: attempt, timeout: policy.connectionTimeout)]
    }

    private mutating func connected() -> [Action] {
        phase = .connected
        return [.cancelAttemptTimer, .emit(.connect), .resubscribe]
    }

    /// The link is down: `.forceDisconnect` after `disconnect()`, else `.disconnect` or `.giveUp`
    /// by `disconnectRetries`; pending work fails in every phase.
    private mutating func linkLost(serviceGone: Bool) -> [Action] {
        guard phase == .connected || phase == .disconnecting else { return [.failPending(serviceGone: serviceGone)] }
        let event: ConnectionEvent
        if forced {
            event = .forceDisconnect
        } else {
            disconnects += 1
            event = disconnects > policy.disconnectRetries ? .giveUp : .disconnect
        }
        phase = .idle
        forced = false
        let reconnect = reconnectPending && !serviceGone
        reconnectPending = false
        let actions: [Action] = [.failPending(serviceGone: serviceGone), .emit(event)]
        return reconnect ? actions + startAttempt() : actions
    }
}
