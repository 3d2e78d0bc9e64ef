// NotificationStateMachine: a characteristic's notification state as a pure value: events in, actions out.
import BlueZ

/// The notification logic of a ``Characteristic``, free of the bus, of time and of locks:
/// ``handle(_:)`` takes an event (an app call, a queued operation that runs, a BlueZ reply, the
/// socket's end, the link's loss) and returns the actions to perform, in order. `Characteristic`
/// feeds it under its lock and performs the actions outside the lock, except the update streams'
/// bookkeeping (``Action/replaceEarlierSessionStreams``, ``Action/finishStreams``,
/// ``Action/endSession(keepStreams:)``), which it applies to its `NotificationStreams` in the same
/// critical section; the streams themselves are finished outside.
///
/// Phases (``Phase``):
/// - `off`: no session of ours.
/// - `starting(op, via)`: the start operation `op` (a ``GattOperation/id``) runs, through
///   `AcquireNotify` (`.acquiredSocket`) or `StartNotify` (`.propertiesChanged`). Replies count only
///   while the phase still names their operation: a start that ended without one (deadline, link
///   lost, replaced attribute) does not take over what a later start began.
/// - `on(socket | propertiesChanged)`: notifications are on, through the acquired socket or through
///   `Value` PropertiesChanged.
/// - `releasing(op)`: the stop operation `op` closed the acquired socket and waits until BlueZ
///   reports `NotifyAcquired` false. Off in every other respect (queries, replies, the link's loss).
///
/// What outlives the phases, kept beside the phase (as `ConnectionStateMachine` keeps its counters):
/// - ``acquireUnsupported``: a `StartNotify` after a refused `AcquireNotify` succeeded; later starts
///   use `StartNotify` straight away. A refusal alone does not set it (a refusal about the link or
///   the moment, `NotPermitted` "Notify acquired" included, fails that start instead).
/// - ``resubscribeOnReconnect``: the option of the latest `startNotifying`, cleared by a stop.
/// - ``resubscriptionPending``: the link dropped while notifications were on (or starting) with
///   that option; survives failed re-subscriptions and further drops until one succeeds
///   (``Event/resubscribed``) or the app stops.
/// - ``remoteClosedSocket``: BlueZ ended our acquired socket (the link is usually going down); the
///   link's loss that follows counts as losing notifications that were on. It outlives a start that
///   fails meanwhile, and ends with a session that starts or with the link's loss.
///
/// "Stop queued after a start" is no state of this machine: the device's operation queue runs the
/// stop (``Event/stopRan(op:)``) after any start queued before it.
///
/// Events (``Event``): start requested, start operation runs (on an attribute that may have been
/// replaced), start abandoned (deadline, queue failed with the link or `terminate()`),
/// `AcquireNotify` replied (socket or
/// refusal), `StartNotify` replied, the late-session stop runs, stop requested, stop operation runs,
/// the wait for `NotifyAcquired` false ended, socket closed by BlueZ, link lost (or terminated),
/// re-subscription succeeded.
struct NotificationStateMachine<Socket: Equatable & Sendable>: Equatable, Sendable {
    // MARK: - Phases

    /// How notifications arrive while on.
    enum Transport: Equatable, Sendable {
        /// The socket `AcquireNotify` returned.
        case socket(Socket)
        /// `Value` PropertiesChanged after `StartNotify`.
        case propertiesChanged
    }

    /// Where the notifications are (see the type's documentation).
    enum Phase: Equatable, Sendable {
        /// No session of ours.
        case off
        /// The start operation `op` runs, through `AcquireNotify` or `StartNotify`; only its replies count.
        case starting(op: Int, via: Characteristic.NotificationTransport)
        /// Notifications are on.
        case on(Transport)
        /// The stop operation `op` closed the socket and waits for `NotifyAcquired` false; off otherwise.
        case releasing(op: Int)
    }

    // MARK: - Events

    /// How `AcquireNotify` answered.
    enum AcquireReply: Equatable, Sendable {
        /// The socket (with its MTU, which the caller keeps with it).
        case socket(Socket)
        /// An error of this kind.
        case refused(BlueZErrorKind)
    }

    /// What happened.
    enum Event: Equatable, Sendable {
        /// `startNotifying(...)` with its option; `byApp` is false for the library's own
        /// re-subscription after a reconnection.
        case startRequested(resubscribeOnReconnect: Bool, byApp: Bool)
        /// The start operation `op` runs; `canAcquire` is whether `Flags` contain "notify";
        /// `replaced` is whether the object at the path now holds another characteristic.
        case startRan(op: Int, canAcquire: Bool, replaced: Bool)
        /// The start operation `op` ended without BlueZ's answer: its deadline passed, or the
        /// queue was failed (link lost, `terminate()`). The queue answers it.
        case startAbandoned(op: Int)
        /// `AcquireNotify` of `op` answered.
        case acquireReplied(op: Int, AcquireReply)
        /// `StartNotify` of `op` answered (`ok`); `afterRefusal` when it followed a refused `AcquireNotify`.
        case startNotifyReplied(op: Int, afterRefusal: Bool, ok: Bool)
        /// The operation `op` queued by ``Action/stopLateSession`` runs.
        case lateStopRan(op: Int)
        /// `stopNotifying(...)`; `linkUp` is whether the peripheral's link is up.
        case stopRequested(linkUp: Bool)
        /// The stop operation `op` queued by ``Action/queueStop`` runs.
        case stopRan(op: Int)
        /// The wait of the stop operation `op` for `NotifyAcquired` false ended (released, failed or timed out).
        case releaseEnded(op: Int)
        /// BlueZ closed the acquired socket (end of file or a socket error).
        case socketClosedByRemote
        /// The link dropped (`terminated`: `terminate()` was called).
        case linkLost(terminated: Bool)
        /// The library's re-subscription after a reconnection succeeded.
        case resubscribed
    }

    // MARK: - Actions

    /// Why a start operation fails.
    enum Failure: Equatable, Sendable {
        /// With BlueZ's error answer.
        case answer
        /// With `.disconnected`: the operation had ended before this success arrived.
        case late
        /// With `.notFound`: the object at the path now holds another characteristic.
        case replaced
    }

    /// What to do, in order.
    enum Action: Equatable, Sendable {
        /// Finish the update streams of earlier connection sessions (`NotificationStreams.appStarted()`).
        case replaceEarlierSessionStreams
        /// Finish every update stream (`NotificationStreams.removeAll()`).
        case finishStreams
        /// A new connection session for the update streams (`NotificationStreams.linkLost(keepStreams:)`):
        /// unless `keepStreams`, finish them with the link's error.
        case endSession(keepStreams: Bool)
        /// Call `AcquireNotify` for the start operation `op`.
        case acquireNotify(op: Int)
        /// Call `StartNotify` for the start operation `op`.
        case startNotify(op: Int, afterRefusal: Bool)
        /// Call `StopNotify` for the operation `op`, which ends with its answer.
        case stopNotify(op: Int)
        /// Start reading the socket.
        case startSocket(Socket)
        /// Close the socket from our side (which releases the notification in BlueZ).
        case closeSocket(Socket)
        /// End the stop operation `op` once BlueZ reports `NotifyAcquired` false (then feed
        /// ``Event/releaseEnded(op:)``).
        case awaitRelease(op: Int)
        /// Answer the operation `op` with success.
        case succeed(op: Int)
        /// Fail the operation `op`.
        case fail(op: Int, Failure)
        /// Queue an operation that turns off a `StartNotify` session nobody follows (its start
        /// ended before BlueZ answered), if the link is up; it feeds ``Event/lateStopRan(op:)``.
        case stopLateSession
        /// Queue the stop operation (it feeds ``Event/stopRan(op:)``).
        case queueStop
        /// Answer the stop at once: the link took the notifications with it.
        case stopDone
    }

    // MARK: - State

    private(set) var phase = Phase.off
    /// A `StartNotify` after a refused `AcquireNotify` succeeded: starts use `StartNotify` from then on.
    private(set) var acquireUnsupported = false
    /// The option of the latest `startNotifying`; a stop clears it.
    private(set) var resubscribeOnReconnect = false
    /// Notifications are to be turned on again after the reconnection (the link dropped while
    /// they were on); until a re-subscription succeeds or the app stops.
    private(set) var resubscriptionPending = false
    /// BlueZ closed our acquired socket since the last session started or the link dropped.
    private(set) var remoteClosedSocket = false

    init() {}

    /// A machine in a given state (for tests).
    init(phase: Phase, acquireUnsupported: Bool = false, resubscribeOnReconnect: Bool = false,
         resubscriptionPending: Bool = false, remoteClosedSocket: Bool = false) {
        self.phase = phase
        self.acquireUnsupported = acquireUnsupported
        self.resubscribeOnReconnect = resubscribeOnReconnect
        self.resubscriptionPending = resubscriptionPending
        self.remoteClosedSocket = remoteClosedSocket
    }

    /// Whether notifications are on.
    var isOn: Bool {
        if case .on = phase { return true }
        return false
    }

    /// How notifications arrive, while on.
    var transport: Characteristic.NotificationTransport? {
        switch phase {
        case .on(.socket): .acquiredSocket
        case .on(.propertiesChanged): .propertiesChanged
        case .off, .starting, .releasing: nil
        }
    }

    /// The acquired socket, while on through it.
    var socket: Socket? {
        if case .on(.socket(let socket)) = phase { return socket }
        return nil
    }

    /// Whether a `Value` PropertiesChanged is a notification: while starting (a `StartNotify` may
    /// be answered after its first notification) and while on through `StartNotify`.
    var deliversPropertyValues: Bool {
        switch phase {
        case .starting, .on(.propertiesChanged): true
        case .off, .on(.socket), .releasing: false
        }
    }

    /// Whether a refused `AcquireNotify` is worth a `StartNotify`: not when the refusal is about
    /// the link or the moment (it would be refused alike, or must be retried as it is), nor when
    /// the notifications are held already (`NotPermitted` "Notify acquired": StartNotify is
    /// refused the same way while a socket holds them).
    static func acquireRefusalFallsBack(_ kind: BlueZErrorKind) -> Bool {
        ![.timeout, .serviceUnavailable, .disconnected, .notConnected, .inProgress, .notPermitted].contains(kind)
    }

    // MARK: - Transitions

    /// Applies `event`; returns the actions to perform, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .startRequested(let resubscribe, let byApp):
            resubscribeOnReconnect = resubscribe
            return byApp ? [.replaceEarlierSessionStreams] : []
        case .startRan(let op, let canAcquire, let replaced):
            if isOn { return [.succeed(op: op)] }
            if replaced {
                phase = .off
                return [.fail(op: op, .replaced)]
            }
            let acquire = canAcquire && !acquireUnsupported
            phase = .starting(op: op, via: acquire ? .acquiredSocket : .propertiesChanged)
            return [acquire ? .acquireNotify(op: op) : .startNotify(op: op, afterRefusal: false)]
        case .startAbandoned(let op):
            abandon(op)
            return []
        case .acquireReplied(let op, .socket(let socket)):
            guard owns(op) else { return [.closeSocket(socket), .fail(op: op, .late)] }
            sessionStarted(.socket(socket))
            return [.startSocket(socket), .succeed(op: op)]
        case .acquireReplied(let op, .refused(let kind)):
            guard Self.acquireRefusalFallsBack(kind) else {
                abandon(op)
                return [.fail(op: op, .answer)]
            }
            guard owns(op) else { return [.fail(op: op, .answer)] }
            phase = .starting(op: op, via: .propertiesChanged)
            return [.startNotify(op: op, afterRefusal: true)]
        case .startNotifyReplied(let op, let afterRefusal, let ok):
            guard ok else {
                abandon(op)
                return [.fail(op: op, .answer)]
            }
            if afterRefusal { acquireUnsupported = true }
            // BlueZ now notifies a session nobody follows: turned off in turn, behind any start since.
            guard owns(op) else { return [.fail(op: op, .late), .stopLateSession] }
            sessionStarted(.propertiesChanged)
            return [.succeed(op: op)]
        case .lateStopRan(let op):
            switch phase {
            case .off, .releasing: return [.stopNotify(op: op)]
            case .starting, .on: return [.succeed(op: op)]
            }
        case .stopRequested(let linkUp):
            resubscribeOnReconnect = false
            resubscriptionPending = false
            if linkUp { return [.finishStreams, .queueStop] }
            // The link took the notifications with it (the queue was failed with it).
            let socket = self.socket
            phase = .off
            return [.finishStreams] + (socket.map { [.closeSocket($0)] } ?? []) + [.stopDone]
        case .stopRan(let op):
            let was = phase
            phase = .off
            switch was {
            case .on(.socket(let socket)):
                phase = .releasing(op: op)
                return [.closeSocket(socket), .awaitRelease(op: op)]
            case .on(.propertiesChanged):
                return [.stopNotify(op: op)]
            case .off, .starting, .releasing:
                return [.succeed(op: op)]
            }
        case .releaseEnded(let op):
            if phase == .releasing(op: op) { phase = .off }
            return []
        case .socketClosedByRemote:
            guard case .on(.socket) = phase else { return [] }
            phase = .off
            remoteClosedSocket = true
            return []
        case .linkLost(let terminated):
            return linkLost(terminated: terminated)
        case .resubscribed:
            resubscriptionPending = false
            return []
        }
    }

    /// Whether the start operation `op` still owns the phase.
    private func owns(_ op: Int) -> Bool {
        if case .starting(op, _) = phase { return true }
        return false
    }

    /// The start operation `op` ends without turning notifications on: off, unless another
    /// operation owns the phase now.
    private mutating func abandon(_ op: Int) {
        if owns(op) { phase = .off }
    }

    /// A start's reply turned notifications on.
    private mutating func sessionStarted(_ transport: Transport) {
        phase = .on(transport)
        remoteClosedSocket = false
    }

    /// Notifications are off. They were on when on or starting, or when BlueZ closed the socket
    /// first; then, with the option (and not on `terminate()`), they are turned on again after the
    /// reconnection and the update streams stay open. Streams opened while notifications were off
    /// stay open too, except on `terminate()`.
    private mutating func linkLost(terminated: Bool) -> [Action] {
        let socket = self.socket
        let wasOn: Bool
        switch phase {
        case .on, .starting: wasOn = true
        case .off, .releasing: wasOn = remoteClosedSocket
        }
        phase = .off
        remoteClosedSocket = false
        let resubscribing = wasOn && resubscribeOnReconnect && !terminated
        if resubscribing { resubscriptionPending = true }
        return (socket.map { [.closeSocket($0)] } ?? []) + [.endSession(keepStreams: resubscribing || !(wasOn || terminated))]
    }
}
