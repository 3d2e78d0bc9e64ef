// NotificationStateMachine: every transition (phase × event → phase, flags and actions), and the
// start/stop races as event sequences; no bus.

import BlueZ
import Testing
@testable import BlueCapKit

@Suite("Notification state machine")
struct NotificationStateMachineTests {
    /// A stand-in for the acquired socket: equal when the numbers are.
    struct Socket: Equatable, Sendable, CustomStringConvertible {
        let n: Int
        var description: String { "socket \(n)" }
    }

    typealias Machine = NotificationStateMachine<Socket>
    typealias Event = Machine.Event
    typealias Action = Machine.Action

    static let s1 = Socket(n: 1)
    static let s2 = Socket(n: 2)

    /// A machine in `phase` with the given flags.
    static func m(_ phase: Machine.Phase, unsupported: Bool = false, resubscribe: Bool = false,
                  pending: Bool = false, remoteClosed: Bool = false) -> Machine {
        Machine(phase: phase, acquireUnsupported: unsupported, resubscribeOnReconnect: resubscribe,
                resubscriptionPending: pending, remoteClosedSocket: remoteClosed)
    }

    /// One row of the table: `from` + `event` gives `to` and `actions`, in order.
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

    // The start operation in flight is 7 (6 is an earlier one that ended, 8 a later start); 9 is a stop.
    static let off = m(.off)
    static let acquiring = m(.starting(op: 7, via: .acquiredSocket))
    static let subscribing = m(.starting(op: 7, via: .propertiesChanged))
    static let onSocket = m(.on(.socket(s1)))
    static let onValues = m(.on(.propertiesChanged))
    static let releasing = m(.releasing(op: 7))

    // MARK: - The table

    static let table: [Row] = [
        // Off.
        row(off, .startRequested(resubscribeOnReconnect: true, byApp: true), m(.off, resubscribe: true), [.replaceEarlierSessionStreams]),
        row(m(.off, resubscribe: true), .startRequested(resubscribeOnReconnect: false, byApp: false), off, []),
        row(off, .startRan(op: 8, canAcquire: true, replaced: false), m(.starting(op: 8, via: .acquiredSocket)), [.acquireNotify(op: 8)]),
        row(off, .startRan(op: 8, canAcquire: false, replaced: false), m(.starting(op: 8, via: .propertiesChanged)),
            [.startNotify(op: 8, afterRefusal: false)]),
        row(m(.off, unsupported: true), .startRan(op: 8, canAcquire: true, replaced: false),
            m(.starting(op: 8, via: .propertiesChanged), unsupported: true), [.startNotify(op: 8, afterRefusal: false)]),
        row(off, .startRan(op: 8, canAcquire: true, replaced: true), off, [.fail(op: 8, .replaced)]),
        row(off, .startAbandoned(op: 7), off, []),
        row(off, .acquireReplied(op: 7, .socket(s2)), off, [.closeSocket(s2), .fail(op: 7, .late)]),
        row(off, .acquireReplied(op: 7, .refused(.notSupported)), off, [.fail(op: 7, .answer)]),
        row(off, .acquireReplied(op: 7, .refused(.notPermitted)), off, [.fail(op: 7, .answer)]),
        row(off, .startNotifyReplied(op: 7, afterRefusal: false, ok: true), off, [.fail(op: 7, .late), .stopLateSession]),
        row(off, .startNotifyReplied(op: 7, afterRefusal: true, ok: true), m(.off, unsupported: true), [.fail(op: 7, .late), .stopLateSession]),
        row(off, .startNotifyReplied(op: 7, afterRefusal: true, ok: false), off, [.fail(op: 7, .answer)]),
        row(off, .lateStopRan(op: 9), off, [.stopNotify(op: 9)]),
        row(m(.off, resubscribe: true, pending: true), .stopRequested(linkUp: true), off, [.finishStreams, .queueStop]),
        row(m(.off, resubscribe: true, pending: true), .stopRequested(linkUp: false), off, [.finishStreams, .stopDone]),
        row(m(.off, remoteClosed: true), .stopRequested(linkUp: false), m(.off, remoteClosed: true), [.finishStreams, .stopDone]),
        row(off, .stopRan(op: 9), off, [.succeed(op: 9)]),
        row(m(.off, remoteClosed: true), .stopRan(op: 9), m(.off, remoteClosed: true), [.succeed(op: 9)]),
        row(off, .releaseEnded(op: 9), off, []),
        row(off, .socketClosedByRemote, off, []),
        row(m(.off, resubscribe: true), .linkLost(terminated: false), m(.off, resubscribe: true), [.endSession(keepStreams: true)]),
        row(m(.off, resubscribe: true), .linkLost(terminated: true), m(.off, resubscribe: true), [.endSession(keepStreams: false)]),
        // A failed re-subscription is tried again after the next reconnection.
        row(m(.off, pending: true), .linkLost(terminated: false), m(.off, pending: true), [.endSession(keepStreams: true)]),
        // BlueZ closed the socket before the link change: notifications were on.
        row(m(.off, resubscribe: true, remoteClosed: true), .linkLost(terminated: false), m(.off, resubscribe: true, pending: true),
            [.endSession(keepStreams: true)]),
        row(m(.off, remoteClosed: true), .linkLost(terminated: false), off, [.endSession(keepStreams: false)]),
        row(m(.off, resubscribe: true, remoteClosed: true), .linkLost(terminated: true), m(.off, resubscribe: true),
            [.endSession(keepStreams: false)]),
        row(m(.off, pending: true), .resubscribed, off, []),

        // Starting through AcquireNotify (operation 7).
        row(acquiring, .startRequested(resubscribeOnReconnect: true, byApp: true),
            m(.starting(op: 7, via: .acquiredSocket), resubscribe: true), [.replaceEarlierSessionStreams]),
        row(acquiring, .startRan(op: 8, canAcquire: true, replaced: false), m(.starting(op: 8, via: .acquiredSocket)), [.acquireNotify(op: 8)]),
        row(acquiring, .startRan(op: 8, canAcquire: true, replaced: true), off, [.fail(op: 8, .replaced)]),
        row(acquiring, .startAbandoned(op: 7), off, []),
        row(acquiring, .startAbandoned(op: 6), acquiring, []),
        row(m(.starting(op: 7, via: .acquiredSocket), remoteClosed: true), .acquireReplied(op: 7, .socket(s2)), m(.on(.socket(s2))),
            [.startSocket(s2), .succeed(op: 7)]),
        row(acquiring, .acquireReplied(op: 6, .socket(s2)), acquiring, [.closeSocket(s2), .fail(op: 6, .late)]),
        row(acquiring, .acquireReplied(op: 7, .refused(.notSupported)), subscribing, [.startNotify(op: 7, afterRefusal: true)]),
        row(acquiring, .acquireReplied(op: 7, .refused(.failed)), subscribing, [.startNotify(op: 7, afterRefusal: true)]),
        // Refusals about the link, the moment or a held notification fail the start; nothing is learnt.
        row(acquiring, .acquireReplied(op: 7, .refused(.notPermitted)), off, [.fail(op: 7, .answer)]),
        row(acquiring, .acquireReplied(op: 7, .refused(.inProgress)), off, [.fail(op: 7, .answer)]),
        row(acquiring, .acquireReplied(op: 7, .refused(.notConnected)), off, [.fail(op: 7, .answer)]),
        row(acquiring, .acquireReplied(op: 7, .refused(.timeout)), off, [.fail(op: 7, .answer)]),
        row(acquiring, .acquireReplied(op: 7, .refused(.serviceUnavailable)), off, [.fail(op: 7, .answer)]),
        row(acquiring, .acquireReplied(op: 7, .refused(.disconnected)), off, [.fail(op: 7, .answer)]),
        row(acquiring, .acquireReplied(op: 6, .refused(.notSupported)), acquiring, [.fail(op: 6, .answer)]),
        row(acquiring, .acquireReplied(op: 6, .refused(.notPermitted)), acquiring, [.fail(op: 6, .answer)]),
        row(acquiring, .startNotifyReplied(op: 6, afterRefusal: true, ok: true),
            m(.starting(op: 7, via: .acquiredSocket), unsupported: true), [.fail(op: 6, .late), .stopLateSession]),
        row(acquiring, .lateStopRan(op: 9), acquiring, [.succeed(op: 9)]),
        row(m(.starting(op: 7, via: .acquiredSocket), resubscribe: true, pending: true), .stopRequested(linkUp: true),
            acquiring, [.finishStreams, .queueStop]),
        row(acquiring, .stopRequested(linkUp: false), off, [.finishStreams, .stopDone]),
        row(acquiring, .stopRan(op: 9), off, [.succeed(op: 9)]),
        row(acquiring, .releaseEnded(op: 9), acquiring, []),
        row(acquiring, .socketClosedByRemote, acquiring, []),
        row(m(.starting(op: 7, via: .acquiredSocket), resubscribe: true), .linkLost(terminated: false),
            m(.off, resubscribe: true, pending: true), [.endSession(keepStreams: true)]),
        row(acquiring, .linkLost(terminated: false), off, [.endSession(keepStreams: false)]),
        row(m(.starting(op: 7, via: .acquiredSocket), pending: true), .resubscribed, acquiring, []),

        // Starting through StartNotify (operation 7).
        row(subscribing, .startRequested(resubscribeOnReconnect: false, byApp: true), subscribing, [.replaceEarlierSessionStreams]),
        row(subscribing, .startRan(op: 8, canAcquire: false, replaced: false), m(.starting(op: 8, via: .propertiesChanged)),
            [.startNotify(op: 8, afterRefusal: false)]),
        row(subscribing, .startAbandoned(op: 7), off, []),
        row(subscribing, .startAbandoned(op: 6), subscribing, []),
        row(subscribing, .acquireReplied(op: 6, .socket(s2)), subscribing, [.closeSocket(s2), .fail(op: 6, .late)]),
        row(subscribing, .acquireReplied(op: 6, .refused(.notSupported)), subscribing, [.fail(op: 6, .answer)]),
        row(m(.starting(op: 7, via: .propertiesChanged), remoteClosed: true), .startNotifyReplied(op: 7, afterRefusal: false, ok: true),
            onValues, [.succeed(op: 7)]),
        // A fallback that succeeds marks AcquireNotify unsupported; one that fails does not.
        row(subscribing, .startNotifyReplied(op: 7, afterRefusal: true, ok: true), m(.on(.propertiesChanged), unsupported: true),
            [.succeed(op: 7)]),
        row(subscribing, .startNotifyReplied(op: 7, afterRefusal: true, ok: false), off, [.fail(op: 7, .answer)]),
        row(subscribing, .startNotifyReplied(op: 7, afterRefusal: false, ok: false), off, [.fail(op: 7, .answer)]),
        // A late success of an earlier start does not take over this one; its session is turned off behind it.
        row(subscribing, .startNotifyReplied(op: 6, afterRefusal: false, ok: true), subscribing, [.fail(op: 6, .late), .stopLateSession]),
        row(subscribing, .startNotifyReplied(op: 6, afterRefusal: false, ok: false), subscribing, [.fail(op: 6, .answer)]),
        row(subscribing, .lateStopRan(op: 9), subscribing, [.succeed(op: 9)]),
        row(subscribing, .stopRequested(linkUp: true), subscribing, [.finishStreams, .queueStop]),
        row(subscribing, .stopRequested(linkUp: false), off, [.finishStreams, .stopDone]),
        row(subscribing, .stopRan(op: 9), off, [.succeed(op: 9)]),
        row(subscribing, .releaseEnded(op: 9), subscribing, []),
        row(subscribing, .socketClosedByRemote, subscribing, []),
        row(m(.starting(op: 7, via: .propertiesChanged), resubscribe: true), .linkLost(terminated: true),
            m(.off, resubscribe: true), [.endSession(keepStreams: false)]),
        row(m(.starting(op: 7, via: .propertiesChanged), pending: true), .resubscribed, subscribing, []),

        // On through the acquired socket.
        row(onSocket, .startRequested(resubscribeOnReconnect: true, byApp: false), m(.on(.socket(s1)), resubscribe: true), []),
        row(onSocket, .startRan(op: 8, canAcquire: true, replaced: false), onSocket, [.succeed(op: 8)]),
        row(onSocket, .startRan(op: 8, canAcquire: true, replaced: true), onSocket, [.succeed(op: 8)]),
        row(onSocket, .startAbandoned(op: 7), onSocket, []),
        row(onSocket, .acquireReplied(op: 7, .socket(s2)), onSocket, [.closeSocket(s2), .fail(op: 7, .late)]),
        row(onSocket, .acquireReplied(op: 7, .refused(.notSupported)), onSocket, [.fail(op: 7, .answer)]),
        row(onSocket, .startNotifyReplied(op: 7, afterRefusal: false, ok: true), onSocket, [.fail(op: 7, .late), .stopLateSession]),
        row(onSocket, .lateStopRan(op: 9), onSocket, [.succeed(op: 9)]),
        row(m(.on(.socket(s1)), resubscribe: true, pending: true), .stopRequested(linkUp: true), onSocket, [.finishStreams, .queueStop]),
        row(onSocket, .stopRequested(linkUp: false), off, [.finishStreams, .closeSocket(s1), .stopDone]),
        row(onSocket, .stopRan(op: 9), m(.releasing(op: 9)), [.closeSocket(s1), .awaitRelease(op: 9)]),
        row(onSocket, .releaseEnded(op: 9), onSocket, []),
        row(onSocket, .socketClosedByRemote, m(.off, remoteClosed: true), []),
        row(m(.on(.socket(s1)), resubscribe: true), .linkLost(terminated: false), m(.off, resubscribe: true, pending: true),
            [.closeSocket(s1), .endSession(keepStreams: true)]),
        row(m(.on(.socket(s1)), resubscribe: true), .linkLost(terminated: true), m(.off, resubscribe: true),
            [.closeSocket(s1), .endSession(keepStreams: false)]),
        row(m(.on(.socket(s1)), pending: true), .resubscribed, onSocket, []),

        // On through StartNotify.
        row(onValues, .startRequested(resubscribeOnReconnect: true, byApp: true), m(.on(.propertiesChanged), resubscribe: true),
            [.replaceEarlierSessionStreams]),
        row(onValues, .startRan(op: 8, canAcquire: false, replaced: false), onValues, [.succeed(op: 8)]),
        row(onValues, .startAbandoned(op: 7), onValues, []),
        row(onValues, .acquireReplied(op: 7, .socket(s2)), onValues, [.closeSocket(s2), .fail(op: 7, .late)]),
        row(onValues, .acquireReplied(op: 7, .refused(.inProgress)), onValues, [.fail(op: 7, .answer)]),
        row(onValues, .startNotifyReplied(op: 7, afterRefusal: false, ok: false), onValues, [.fail(op: 7, .answer)]),
        row(onValues, .startNotifyReplied(op: 7, afterRefusal: false, ok: true), onValues, [.fail(op: 7, .late), .stopLateSession]),
        row(onValues, .lateStopRan(op: 9), onValues, [.succeed(op: 9)]),
        row(onValues, .stopRequested(linkUp: true), onValues, [.finishStreams, .queueStop]),
        row(onValues, .stopRequested(linkUp: false), off, [.finishStreams, .stopDone]),
        row(onValues, .stopRan(op: 9), off, [.stopNotify(op: 9)]),
        row(onValues, .releaseEnded(op: 9), onValues, []),
        row(onValues, .socketClosedByRemote, onValues, []),
        row(m(.on(.propertiesChanged), resubscribe: true), .linkLost(terminated: false), m(.off, resubscribe: true, pending: true),
            [.endSession(keepStreams: true)]),
        row(onValues, .linkLost(terminated: false), off, [.endSession(keepStreams: false)]),
        row(m(.on(.propertiesChanged), pending: true), .resubscribed, onValues, []),

        // Releasing (stop operation 7 closed the socket and waits for NotifyAcquired false): off to
        // everything but the end of its own wait.
        row(releasing, .startRequested(resubscribeOnReconnect: true, byApp: true), m(.releasing(op: 7), resubscribe: true),
            [.replaceEarlierSessionStreams]),
        // The stop's deadline passed and the queue ran the next start before the wait ended.
        row(releasing, .startRan(op: 8, canAcquire: true, replaced: false), m(.starting(op: 8, via: .acquiredSocket)), [.acquireNotify(op: 8)]),
        row(releasing, .startRan(op: 8, canAcquire: true, replaced: true), off, [.fail(op: 8, .replaced)]),
        row(releasing, .startAbandoned(op: 7), releasing, []),
        row(releasing, .acquireReplied(op: 7, .socket(s2)), releasing, [.closeSocket(s2), .fail(op: 7, .late)]),
        row(releasing, .acquireReplied(op: 6, .refused(.notSupported)), releasing, [.fail(op: 6, .answer)]),
        row(releasing, .startNotifyReplied(op: 6, afterRefusal: false, ok: true), releasing, [.fail(op: 6, .late), .stopLateSession]),
        row(releasing, .lateStopRan(op: 9), releasing, [.stopNotify(op: 9)]),
        row(releasing, .stopRequested(linkUp: true), releasing, [.finishStreams, .queueStop]),
        row(releasing, .stopRequested(linkUp: false), off, [.finishStreams, .stopDone]),
        row(releasing, .stopRan(op: 9), off, [.succeed(op: 9)]),
        row(releasing, .releaseEnded(op: 7), off, []),
        row(releasing, .releaseEnded(op: 6), releasing, []),
        row(releasing, .socketClosedByRemote, releasing, []),
        row(m(.releasing(op: 7), resubscribe: true), .linkLost(terminated: false), m(.off, resubscribe: true), [.endSession(keepStreams: true)]),
        row(m(.releasing(op: 7), pending: true), .resubscribed, releasing, []),
    ]

    @Test("each transition of the table gives its new state and its actions, in order", arguments: table)
    func transition(_ row: Row) {
        var machine = row.from
        let actions = machine.handle(row.event)
        #expect(machine == row.to)
        #expect(actions == row.actions)
    }

    /// The phase's kind, for the coverage check.
    static func kind(_ p: Machine.Phase) -> String {
        switch p {
        case .off: "off"
        case .starting(_, .acquiredSocket): "starting via AcquireNotify"
        case .starting(_, .propertiesChanged): "starting via StartNotify"
        case .on(.socket): "on socket"
        case .on(.propertiesChanged): "on StartNotify"
        case .releasing: "releasing"
        }
    }

    /// The event's kind, for the coverage check.
    static func kind(_ e: Event) -> String {
        switch e {
        case .startRequested: "startRequested"
        case .startRan: "startRan"
        case .startAbandoned: "startAbandoned"
        case .acquireReplied(_, .socket): "acquireReplied socket"
        case .acquireReplied(_, .refused): "acquireReplied refused"
        case .startNotifyReplied: "startNotifyReplied"
        case .lateStopRan: "lateStopRan"
        case .stopRequested: "stopRequested"
        case .stopRan: "stopRan"
        case .releaseEnded: "releaseEnded"
        case .socketClosedByRemote: "socketClosedByRemote"
        case .linkLost: "linkLost"
        case .resubscribed: "resubscribed"
        }
    }

    @Test("the table has a row for every phase × event kind")
    func tableCoversEveryPair() {
        let phases = ["off", "starting via AcquireNotify", "starting via StartNotify", "on socket", "on StartNotify", "releasing"]
        let kinds = ["startRequested", "startRan", "startAbandoned", "acquireReplied socket", "acquireReplied refused",
                     "startNotifyReplied", "lateStopRan", "stopRequested", "stopRan", "releaseEnded", "socketClosedByRemote",
                     "linkLost", "resubscribed"]
        let covered = Set(Self.table.map { "\(Self.kind($0.from.phase)) + \(Self.kind($0.event))" })
        for phase in phases {
            for kind in kinds { #expect(covered.contains("\(phase) + \(kind)"), "no row for \(phase) + \(kind)") }
        }
    }

    // MARK: - Scenarios

    @Test("start; stop, neither awaited: the stop runs after the start and notifications end off (both transports)",
          arguments: [false, true])
    func startThenStop(acquireUnsupported: Bool) {
        var machine = Self.m(.off, unsupported: acquireUnsupported)
        #expect(machine.handle(.startRequested(resubscribeOnReconnect: true, byApp: true)) == [.replaceEarlierSessionStreams])
        #expect(machine.handle(.stopRequested(linkUp: true)) == [.finishStreams, .queueStop])
        // The queue runs the start (1), then the stop (2).
        if acquireUnsupported {
            #expect(machine.handle(.startRan(op: 1, canAcquire: true, replaced: false)) == [.startNotify(op: 1, afterRefusal: false)])
            #expect(machine.handle(.startNotifyReplied(op: 1, afterRefusal: false, ok: true)) == [.succeed(op: 1)])
            #expect(machine.handle(.stopRan(op: 2)) == [.stopNotify(op: 2)])
        } else {
            #expect(machine.handle(.startRan(op: 1, canAcquire: true, replaced: false)) == [.acquireNotify(op: 1)])
            #expect(machine.handle(.acquireReplied(op: 1, .socket(Self.s1))) == [.startSocket(Self.s1), .succeed(op: 1)])
            #expect(machine.handle(.stopRan(op: 2)) == [.closeSocket(Self.s1), .awaitRelease(op: 2)])
            #expect(machine.phase == .releasing(op: 2) && !machine.isOn)
            #expect(machine.handle(.releaseEnded(op: 2)) == [])
        }
        #expect(machine.phase == .off && !machine.resubscribeOnReconnect)
        #expect(machine.handle(.linkLost(terminated: false)) == [.endSession(keepStreams: true)])
        #expect(!machine.resubscriptionPending)
    }

    @Test("a late reply of a timed-out start does not take over a newer start; its session is turned off only if nothing started since")
    func lateReplyOfTimedOutStart() {
        var machine = Self.m(.off, unsupported: true)
        #expect(machine.handle(.startRan(op: 1, canAcquire: true, replaced: false)) == [.startNotify(op: 1, afterRefusal: false)])
        #expect(machine.handle(.startAbandoned(op: 1)) == [])  // its deadline
        #expect(machine.phase == .off)
        #expect(machine.handle(.startRan(op: 2, canAcquire: true, replaced: false)) == [.startNotify(op: 2, afterRefusal: false)])
        #expect(machine.handle(.startNotifyReplied(op: 1, afterRefusal: false, ok: true)) == [.fail(op: 1, .late), .stopLateSession])
        #expect(machine.phase == .starting(op: 2, via: .propertiesChanged))
        #expect(machine.handle(.startNotifyReplied(op: 2, afterRefusal: false, ok: true)) == [.succeed(op: 2)])
        // The late session's stop, queued behind start 2, leaves the session start 2 made.
        #expect(machine.handle(.lateStopRan(op: 3)) == [.succeed(op: 3)])
        #expect(machine.transport == .propertiesChanged)

        // Through AcquireNotify: the late socket is closed, the newer start keeps its own.
        var acquiring = Self.m(.off)
        _ = acquiring.handle(.startRan(op: 4, canAcquire: true, replaced: false))
        _ = acquiring.handle(.startAbandoned(op: 4))
        _ = acquiring.handle(.startRan(op: 5, canAcquire: true, replaced: false))
        #expect(acquiring.handle(.acquireReplied(op: 4, .socket(Self.s1))) == [.closeSocket(Self.s1), .fail(op: 4, .late)])
        #expect(acquiring.handle(.acquireReplied(op: 5, .socket(Self.s2))) == [.startSocket(Self.s2), .succeed(op: 5)])
        #expect(acquiring.socket == Self.s2)
    }

    @Test("AcquireNotify refused with NotPermitted fails that start; the next start acquires again")
    func notPermittedFailsThatStartOnly() {
        var machine = Machine()
        #expect(machine.handle(.startRan(op: 1, canAcquire: true, replaced: false)) == [.acquireNotify(op: 1)])
        #expect(machine.handle(.acquireReplied(op: 1, .refused(.notPermitted))) == [.fail(op: 1, .answer)])
        #expect(machine.phase == .off && !machine.acquireUnsupported)
        #expect(machine.handle(.startRan(op: 2, canAcquire: true, replaced: false)) == [.acquireNotify(op: 2)])
        #expect(machine.handle(.acquireReplied(op: 2, .socket(Self.s1))) == [.startSocket(Self.s1), .succeed(op: 2)])
        #expect(machine.transport == .acquiredSocket)
    }

    @Test("a StartNotify fallback that succeeds marks AcquireNotify unsupported: later starts use StartNotify at once")
    func fallbackMarksAcquireUnsupported() {
        var machine = Machine()
        _ = machine.handle(.startRan(op: 1, canAcquire: true, replaced: false))
        #expect(machine.handle(.acquireReplied(op: 1, .refused(.notSupported))) == [.startNotify(op: 1, afterRefusal: true)])
        #expect(!machine.acquireUnsupported, "a refusal alone marks nothing")
        #expect(machine.handle(.startNotifyReplied(op: 1, afterRefusal: true, ok: true)) == [.succeed(op: 1)])
        #expect(machine.acquireUnsupported && machine.transport == .propertiesChanged && machine.deliversPropertyValues)
        #expect(machine.handle(.stopRan(op: 2)) == [.stopNotify(op: 2)])
        #expect(machine.handle(.startRan(op: 3, canAcquire: true, replaced: false)) == [.startNotify(op: 3, afterRefusal: false)])
    }

    @Test("BlueZ closing the socket before the link change still re-subscribes after the reconnection, even across a start that failed meanwhile")
    func socketClosedBeforeLinkLoss() {
        var machine = Self.m(.on(.socket(Self.s1)), resubscribe: true)
        #expect(machine.handle(.socketClosedByRemote) == [])
        #expect(!machine.isOn && machine.socket == nil)
        _ = machine.handle(.startRan(op: 1, canAcquire: true, replaced: false))
        #expect(machine.handle(.acquireReplied(op: 1, .refused(.notConnected))) == [.fail(op: 1, .answer)])
        #expect(machine.handle(.linkLost(terminated: false)) == [.endSession(keepStreams: true)])
        #expect(machine.resubscriptionPending)
        // The library's re-subscription after the reconnection.
        _ = machine.handle(.startRequested(resubscribeOnReconnect: true, byApp: false))
        _ = machine.handle(.startRan(op: 2, canAcquire: true, replaced: false))
        _ = machine.handle(.acquireReplied(op: 2, .socket(Self.s2)))
        #expect(machine.handle(.resubscribed) == [])
        #expect(!machine.resubscriptionPending && machine.socket == Self.s2)
    }
}
