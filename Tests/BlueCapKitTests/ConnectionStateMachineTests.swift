// ConnectionStateMachine: every transition (phase × event → phase, counters and actions), no bus.

import Testing
@testable import BlueCapKit

@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine
    typealias Event = Machine.Event
    typealias Action = Machine.Action

    static let policy = Machine.Policy(timeoutRetries: 1, disconnectRetries: 1, connectionTimeout: .seconds(5))
    static let other = Machine.Policy(timeoutRetries: 2, disconnectRetries: 3, connectionTimeout: .seconds(7))
    static let t = policy.connectionTimeout

    /// A machine in `phase` with `policy` and the given counters.
    static func m(_ phase: Machine.Phase, attempt: Int = 3, timeouts: Int = 0, disconnects: Int = 0, retries: Int = 0,
                  forced: Bool = false, inFlight: Int = 0, reconnectPending: Bool = false, pending: Bool = false,
                  policy: Machine.Policy = policy) -> Machine {
        Machine(phase: phase, policy: policy, attempt: attempt, timeouts: timeouts, disconnects: disconnects,
                transientRetries: retries, forced: forced, disconnectsInFlight: inFlight, reconnectPending: reconnectPending,
                connectPending: pending)
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let from: Machine
        let event: Event
        let to: Machine
        let actions: [Action]
        var testDescription: String { "\(from.phase) + \(event)" }
    }

    static func row(_ from: Machine, _ event: Event, _ to: Machine, _ actions: [Action]) -> Row {
        Row(from: from, event: event, to: to, actions: actions)
    }

    static let unopened = m(.unopened, attempt: 0)
    static let idle = m(.idle)
    /// Attempt 3's `Device1.Connect` unanswered.
    static let connecting = m(.connecting(attempt: 3), pending: true)
    /// Attempt 3 waiting out the backoff after a transient `Connect` error (no call pending).
    static let backingOff = m(.connecting(attempt: 3), retries: 1)
    static let connected = m(.connected)
    static let disconnecting = m(.disconnecting, forced: true)
    static let terminated = m(.terminated)

    // MARK: - The table

    static let table: [Row] = [
        // No connect() stream yet.
        row(unopened, .connectRequested(other, deviceConnected: false), m(.connecting(attempt: 1), attempt: 1, pending: true, policy: other),
            [.openStream, .startAttemptTimer(attempt: 1, timeout: .seconds(7)), .sendConnect(attempt: 1, timeout: .seconds(7))]),
        row(unopened, .connectRequested(policy, deviceConnected: true), m(.connected, attempt: 0), [.openStream, .emit(.connect)]),
        row(unopened, .reconnectRequested(delay: .zero), unopened, []),
        row(unopened, .reconnectRequested(delay: .seconds(1)), unopened, []),
        row(unopened, .attemptTimedOut(attempt: 0), unopened, []),
        row(unopened, .connectReplied(attempt: 0, .ok), unopened, []),
        row(unopened, .backoffElapsed(attempt: 0, deviceConnected: true), unopened, []),
        row(unopened, .linkUp, unopened, []),
        row(unopened, .linkDown(serviceGone: false), unopened, [.failPending(serviceGone: false)]),
        row(unopened, .deviceRemoved(serviceGone: true), unopened, [.failPending(serviceGone: true)]),
        row(unopened, .disconnectRequested(deviceConnected: true), m(.unopened, attempt: 0, inFlight: 1), [.disconnectLink]),
        row(m(.unopened, attempt: 0, inFlight: 1), .disconnectReplied(linkDown: true), unopened, [.failPending(serviceGone: false)]),
        row(unopened, .disconnectRequested(deviceConnected: false), unopened, []),
        row(unopened, .terminate(deviceConnected: false), m(.terminated, attempt: 0), [.tearDown(disconnect: false)]),
        row(unopened, .terminate(deviceConnected: true), m(.terminated, attempt: 0), [.tearDown(disconnect: true)]),

        // Idle: a new connect() resets the counters; attempts go on numbering.
        row(m(.idle, timeouts: 1, disconnects: 1), .connectRequested(policy, deviceConnected: false), m(.connecting(attempt: 4), attempt: 4, pending: true),
            [.openStream, .startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        row(idle, .connectRequested(policy, deviceConnected: true), connected, [.openStream, .emit(.connect)]),
        row(m(.idle, timeouts: 1, retries: 2), .reconnectRequested(delay: .zero), m(.connecting(attempt: 4), attempt: 4, timeouts: 1, pending: true),
            [.startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        row(idle, .reconnectRequested(delay: .milliseconds(500)), idle, [.scheduleReconnect(delay: .milliseconds(500))]),
        row(idle, .attemptTimedOut(attempt: 3), idle, []),
        row(idle, .connectReplied(attempt: 3, .ok), idle, []),
        row(idle, .backoffElapsed(attempt: 3, deviceConnected: true), idle, []),
        row(idle, .linkUp, idle, []),
        row(idle, .linkDown(serviceGone: false), idle, [.failPending(serviceGone: false)]),
        row(idle, .deviceRemoved(serviceGone: false), idle, [.failPending(serviceGone: false)]),
        row(idle, .disconnectRequested(deviceConnected: true), m(.idle, inFlight: 1), [.disconnectLink]),
        row(m(.idle, inFlight: 1), .disconnectReplied(linkDown: false), idle, []),
        row(idle, .disconnectRequested(deviceConnected: false), idle, []),
        row(idle, .terminate(deviceConnected: false), terminated, [.tearDown(disconnect: false)]),
        row(idle, .terminate(deviceConnected: true), terminated, [.tearDown(disconnect: true)]),

        // Connecting (attempt 3): every way out cancels the attempt's timer first.
        row(connecting, .connectRequested(policy, deviceConnected: false), m(.connecting(attempt: 4), attempt: 4, pending: true),
            [.cancelAttemptTimer, .openStream, .startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        row(connecting, .connectRequested(policy, deviceConnected: true), connected, [.cancelAttemptTimer, .openStream, .emit(.connect)]),
        row(connecting, .reconnectRequested(delay: .zero), connecting, []),
        row(connecting, .reconnectRequested(delay: .seconds(1)), connecting, [.scheduleReconnect(delay: .seconds(1))]),
        row(connecting, .attemptTimedOut(attempt: 3), m(.idle, timeouts: 1, inFlight: 1), [.cancelAttemptTimer, .sendDisconnect, .emit(.timeout)]),
        row(m(.connecting(attempt: 3), timeouts: 1, pending: true), .attemptTimedOut(attempt: 3), m(.idle, timeouts: 2, inFlight: 1),
            [.cancelAttemptTimer, .sendDisconnect, .emit(.giveUp)]),
        row(connecting, .attemptTimedOut(attempt: 2), connecting, []),
        row(connecting, .connectReplied(attempt: 3, .ok), connected, [.cancelAttemptTimer, .emit(.connect), .resubscribe]),
        row(connecting, .connectReplied(attempt: 2, .ok), connecting, []),
        row(connecting, .connectReplied(attempt: 3, .transient), m(.connecting(attempt: 3), retries: 1),
            [.scheduleBackoff(attempt: 3, delay: .milliseconds(100))]),
        row(m(.connecting(attempt: 3), retries: 3, pending: true), .connectReplied(attempt: 3, .transient), m(.connecting(attempt: 3), retries: 4),
            [.scheduleBackoff(attempt: 3, delay: .milliseconds(800))]),
        row(m(.connecting(attempt: 3), retries: 4, pending: true), .connectReplied(attempt: 3, .transient), m(.idle, retries: 4),
            [.cancelAttemptTimer, .reportConnectFailure]),
        row(connecting, .connectReplied(attempt: 3, .failed), idle, [.cancelAttemptTimer, .reportConnectFailure]),
        row(backingOff, .backoffElapsed(attempt: 3, deviceConnected: false), m(.connecting(attempt: 3), retries: 1, pending: true),
            [.sendConnect(attempt: 3, timeout: t)]),
        row(backingOff, .backoffElapsed(attempt: 3, deviceConnected: true), m(.connected, retries: 1), [.cancelAttemptTimer, .emit(.connect), .resubscribe]),
        row(backingOff, .backoffElapsed(attempt: 2, deviceConnected: false), backingOff, []),
        // Connected=true before the Connect's answer: bluetoothd sets it on the kernel's
        // connection event, before the ATT channel (and SMP) are ready; the answer decides.
        row(connecting, .linkUp, connecting, []),
        // Between a transient error's retries, the link coming up is the attempt's success.
        row(backingOff, .linkUp, m(.connected, retries: 1), [.cancelAttemptTimer, .emit(.connect), .resubscribe]),
        // A link that comes up while a Disconnect of ours is pending is a cancelled attempt's.
        row(m(.connecting(attempt: 3), inFlight: 2), .linkUp, m(.connecting(attempt: 3), inFlight: 2), []),
        row(m(.connecting(attempt: 3), inFlight: 1, pending: true), .disconnectReplied(linkDown: false), connecting, []),
        row(connecting, .linkDown(serviceGone: false), connecting, [.failPending(serviceGone: false)]),
        row(connecting, .deviceRemoved(serviceGone: true), idle,
            [.cancelAttemptTimer, .failAttempt, .failPending(serviceGone: true)]),
        // The device object removed (an unpaired device after a drop): the attempt looks for it.
        row(connecting, .deviceRemoved(serviceGone: false), connecting, [.failPending(serviceGone: false), .awaitDevice(attempt: 3)]),
        row(connecting, .disconnectRequested(deviceConnected: false), m(.idle, attempt: 4, inFlight: 1),
            [.cancelAttemptTimer, .sendDisconnect, .emit(.forceDisconnect)]),
        row(connecting, .terminate(deviceConnected: false), terminated, [.cancelAttemptTimer, .tearDown(disconnect: true)]),

        // Connected: drops count against disconnectRetries (BlueCap counting).
        row(m(.connected, timeouts: 1, disconnects: 1), .connectRequested(policy, deviceConnected: true), connected, [.openStream, .emit(.connect)]),
        row(connected, .connectRequested(policy, deviceConnected: false), m(.connecting(attempt: 4), attempt: 4, pending: true),
            [.openStream, .startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        row(connected, .reconnectRequested(delay: .zero), connected, []),
        row(connected, .reconnectRequested(delay: .seconds(1)), connected, [.scheduleReconnect(delay: .seconds(1))]),
        row(connected, .attemptTimedOut(attempt: 3), connected, []),
        row(connected, .connectReplied(attempt: 3, .ok), connected, []),
        row(connected, .backoffElapsed(attempt: 3, deviceConnected: true), connected, []),
        row(connected, .linkUp, connected, []),
        row(connected, .linkDown(serviceGone: false), m(.idle, disconnects: 1), [.failPending(serviceGone: false), .emit(.disconnect)]),
        row(m(.connected, disconnects: 1), .linkDown(serviceGone: false), m(.idle, disconnects: 2),
            [.failPending(serviceGone: false), .emit(.giveUp)]),
        row(connected, .deviceRemoved(serviceGone: true), m(.idle, disconnects: 1), [.failPending(serviceGone: true), .emit(.disconnect)]),
        row(connected, .disconnectRequested(deviceConnected: true), m(.disconnecting, forced: true, inFlight: 1), [.disconnectLink]),
        row(connected, .disconnectReplied(linkDown: false), connected, []),
        row(connected, .terminate(deviceConnected: true), terminated, [.tearDown(disconnect: true)]),

        // Disconnecting (after disconnect()): the drop is .forceDisconnect and does not count.
        row(disconnecting, .connectRequested(policy, deviceConnected: false), m(.connecting(attempt: 4), attempt: 4, pending: true),
            [.openStream, .startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        // reconnect() while the link goes down: the attempt starts once it is down.
        row(disconnecting, .reconnectRequested(delay: .zero), m(.disconnecting, forced: true, reconnectPending: true), []),
        row(m(.disconnecting, forced: true, reconnectPending: true), .linkDown(serviceGone: false), m(.connecting(attempt: 4), attempt: 4, pending: true),
            [.failPending(serviceGone: false), .emit(.forceDisconnect), .startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        row(m(.disconnecting, forced: true, reconnectPending: true), .linkDown(serviceGone: true), idle,
            [.failPending(serviceGone: true), .emit(.forceDisconnect)]),
        row(disconnecting, .reconnectRequested(delay: .seconds(1)), disconnecting, [.scheduleReconnect(delay: .seconds(1))]),
        row(disconnecting, .attemptTimedOut(attempt: 3), disconnecting, []),
        row(disconnecting, .connectReplied(attempt: 3, .ok), disconnecting, []),
        row(disconnecting, .backoffElapsed(attempt: 3, deviceConnected: false), disconnecting, []),
        row(disconnecting, .linkUp, disconnecting, []),
        row(disconnecting, .linkDown(serviceGone: false), idle, [.failPending(serviceGone: false), .emit(.forceDisconnect)]),
        row(disconnecting, .deviceRemoved(serviceGone: false), idle, [.failPending(serviceGone: false), .emit(.forceDisconnect)]),
        row(disconnecting, .disconnectRequested(deviceConnected: true), disconnecting, []),
        row(m(.disconnecting, forced: true, inFlight: 1), .disconnectReplied(linkDown: true), idle,
            [.failPending(serviceGone: false), .emit(.forceDisconnect)]),
        row(disconnecting, .terminate(deviceConnected: false), m(.terminated, forced: true), [.tearDown(disconnect: true)]),

        // Terminated: only a new connect() is answered, with .terminated.
        row(terminated, .connectRequested(policy, deviceConnected: false), terminated, [.rejectTerminated]),
        row(terminated, .reconnectRequested(delay: .zero), terminated, []),
        row(terminated, .reconnectRequested(delay: .seconds(1)), terminated, []),
        row(terminated, .attemptTimedOut(attempt: 3), terminated, []),
        row(terminated, .connectReplied(attempt: 3, .ok), terminated, []),
        row(terminated, .backoffElapsed(attempt: 3, deviceConnected: true), terminated, []),
        row(terminated, .linkUp, terminated, []),
        row(terminated, .linkDown(serviceGone: true), terminated, []),
        row(terminated, .deviceRemoved(serviceGone: true), terminated, []),
        row(terminated, .disconnectRequested(deviceConnected: true), terminated, []),
        row(terminated, .terminate(deviceConnected: true), terminated, []),
        row(terminated, .disconnectReplied(linkDown: true), terminated, []),
        // A GATT call answered "Not connected": only a connected link ends (reported, taken down).
        row(connected, .gattLinkGone, m(.idle, disconnects: 1, inFlight: 1),
            [.disconnectLink, .failPending(serviceGone: false), .emit(.disconnect)]),
        row(m(.connected, disconnects: 1), .gattLinkGone, m(.idle, disconnects: 2, inFlight: 1),
            [.disconnectLink, .failPending(serviceGone: false), .emit(.giveUp)]),
        // A Connect never goes out while a Disconnect of ours is unanswered (bluetoothd defers a
        // connected device's Disconnect and answers Connect at once): the attempt waits for it.
        row(m(.idle, inFlight: 1), .reconnectRequested(delay: .zero), m(.idle, inFlight: 1, reconnectPending: true), []),
        row(m(.idle, inFlight: 1, reconnectPending: true), .disconnectReplied(linkDown: false), m(.connecting(attempt: 4), attempt: 4, pending: true),
            [.startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        row(m(.idle, inFlight: 1, reconnectPending: true), .disconnectReplied(linkDown: true), m(.connecting(attempt: 4), attempt: 4, pending: true),
            [.failPending(serviceGone: false), .startAttemptTimer(attempt: 4, timeout: t), .sendConnect(attempt: 4, timeout: t)]),
        row(m(.idle, inFlight: 2, reconnectPending: true), .disconnectReplied(linkDown: false), m(.idle, inFlight: 1, reconnectPending: true), []),
        row(m(.idle, inFlight: 1), .connectRequested(other, deviceConnected: false), m(.idle, inFlight: 1, reconnectPending: true, policy: other),
            [.openStream]),
        row(m(.idle, inFlight: 1, reconnectPending: true), .disconnectRequested(deviceConnected: false), m(.idle, inFlight: 1), []),
        row(unopened, .gattLinkGone, unopened, []),
        row(idle, .gattLinkGone, idle, []),
        row(connecting, .gattLinkGone, connecting, []),
        row(disconnecting, .gattLinkGone, disconnecting, []),
        row(terminated, .gattLinkGone, terminated, []),
    ]

    @Test("each transition of the table gives its new state and its actions, in order", arguments: table)
    func transition(_ row: Row) {
        var machine = row.from
        let actions = machine.handle(row.event)
        #expect(machine == row.to)
        #expect(actions == row.actions)
    }

    /// The event's kind, for the coverage check.
    static func kind(_ e: Event) -> String {
        switch e {
        case .connectRequested: "connectRequested"
        case .reconnectRequested: "reconnectRequested"
        case .attemptTimedOut: "attemptTimedOut"
        case .connectReplied: "connectReplied"
        case .backoffElapsed: "backoffElapsed"
        case .linkUp: "linkUp"
        case .disconnectReplied: "disconnectReplied"
        case .linkDown: "linkDown"
        case .deviceRemoved: "deviceRemoved"
        case .gattLinkGone: "gattLinkGone"
        case .disconnectRequested: "disconnectRequested"
        case .terminate: "terminate"
        }
    }

    @Test("the table has a row for every phase × event kind")
    func tableCoversEveryPair() {
        let phases: [Machine.Phase] = [.unopened, .idle, .connecting(attempt: 3), .connected, .disconnecting, .terminated]
        let kinds = ["connectRequested", "reconnectRequested", "attemptTimedOut", "connectReplied", "backoffElapsed",
                     "linkUp", "disconnectReplied", "linkDown", "deviceRemoved", "gattLinkGone", "disconnectRequested", "terminate"]
        let covered = Set(Self.table.map { "\($0.from.phase) \(Self.kind($0.event))" })
        for phase in phases {
            for kind in kinds { #expect(covered.contains("\(phase) \(kind)"), "no row for \(phase) + \(kind)") }
        }
    }

    @Test("BlueCap counting: with timeoutRetries 2 the first two timeouts yield .timeout and the third .giveUp")
    func timeoutCounting() {
        var machine = Machine()
        var emitted: [ConnectionEvent] = []
        let policy = Machine.Policy(timeoutRetries: 2, disconnectRetries: 0, connectionTimeout: .seconds(1))
        _ = machine.handle(.connectRequested(policy, deviceConnected: false))
        for round in 1...3 {
            let attempt = machine.attempt
            for case .emit(let e) in machine.handle(.attemptTimedOut(attempt: attempt)) { emitted.append(e) }
            // The timed-out attempt's Disconnect is answered (the next Connect waits for that).
            _ = machine.handle(.disconnectReplied(linkDown: false))
            if round < 3 { _ = machine.handle(.reconnectRequested(delay: .zero)) }
        }
        #expect(emitted == [.timeout, .timeout, .giveUp])
        // After .giveUp the app may still reconnect: the next attempt connects.
        _ = machine.handle(.reconnectRequested(delay: .zero))
        #expect(machine.handle(.connectReplied(attempt: machine.attempt, .ok)) == [.cancelAttemptTimer, .emit(.connect), .resubscribe])
    }

    @Test("transient Connect errors back off 100, 200, 400, 800 ms inside one attempt, then the error is reported")
    func transientBackoff() {
        var machine = Machine()
        _ = machine.handle(.connectRequested(Self.policy, deviceConnected: false))
        let attempt = machine.attempt
        var delays: [Duration] = []
        for _ in 0..<Machine.transientRetryLimit {
            for case .scheduleBackoff(_, let d) in machine.handle(.connectReplied(attempt: attempt, .transient)) { delays.append(d) }
            #expect(machine.handle(.backoffElapsed(attempt: attempt, deviceConnected: false)) == [.sendConnect(attempt: attempt, timeout: Self.t)])
        }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800)])
        #expect(machine.handle(.connectReplied(attempt: attempt, .transient)) == [.cancelAttemptTimer, .reportConnectFailure])
        #expect(machine.phase == .idle)
    }
    @Test("disconnect() during an attempt, then reconnect(): the new Connect waits for the Disconnect's answer, and the cancelled attempt's link is not the new attempt's")
    func cancelledAttemptsLinkIsNotTheNextOne() {
        var machine = Machine()
        _ = machine.handle(.connectRequested(Self.policy, deviceConnected: false))
        let cancelled = machine.attempt
        #expect(machine.handle(.disconnectRequested(deviceConnected: false)) == [.cancelAttemptTimer, .sendDisconnect, .emit(.forceDisconnect)])
        // No Connect while our Disconnect is unanswered (bluetoothd would answer it for the link
        // the Disconnect is about to take down).
        #expect(machine.handle(.reconnectRequested(delay: .zero)) == [])
        #expect(machine.phase == .idle && machine.reconnectPending && machine.disconnectsInFlight == 1 && !machine.deviceConnectedIsCurrent)
        // The cancelled attempt's Connect brings the link up (answered too): not ours.
        #expect(machine.handle(.connectReplied(attempt: cancelled, .ok)) == [])
        #expect(machine.handle(.linkUp) == [])
        // Our Disconnect is answered: now the new attempt goes out.
        let current = cancelled + 2
        #expect(machine.handle(.disconnectReplied(linkDown: false))
                == [.startAttemptTimer(attempt: current, timeout: Self.t), .sendConnect(attempt: current, timeout: Self.t)])
        #expect(machine.handle(.linkDown(serviceGone: false)) == [.failPending(serviceGone: false)])
        #expect(machine.phase == .connecting(attempt: current) && machine.deviceConnectedIsCurrent)
        // The new attempt's link: up once its Connect is answered.
        #expect(machine.handle(.linkUp) == [])
        #expect(machine.handle(.connectReplied(attempt: current, .ok)) == [.cancelAttemptTimer, .emit(.connect), .resubscribe])
    }
}
