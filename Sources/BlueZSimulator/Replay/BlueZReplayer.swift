// BlueZReplayer: plays a recorded BlueZScenario back to the app under test as `org.bluez`.
import BlueCapKit
import DBus
import Dispatch
import Locking
import Timing

// MARK: - BlueZReplayer

/// Plays a ``BlueZScenario`` back as bluetoothd: owns `org.bluez` on a (private) bus, serves
/// the recorded object tree (`GetManagedObjects`, `Properties.Get/GetAll`, kept up to date by
/// the signals it sends), answers the app's calls with the recorded replies in order, sends the
/// recorded signals at their recorded offsets on `clock`, and makes BlueZ's recorded calls into
/// the app. A call the recording does not have at that point is answered with the error
/// `org.bluecap.Replay.Diverged`, whose message names the call expected and the call seen, and
/// is kept in ``report``, which also lists what of the recording the app never reached.
///
/// Order and timing: the replay walks the recording in its order. A signal goes out at its
/// recorded distance from the event before it (on `clock`); a call of the app is awaited where
/// it was recorded and answered there, after the signals recorded while it was in flight. A
/// call the app makes ahead of its recorded place is answered at once. Unordered calls
/// (`unordered`) may come more often than recorded, or fewer times when they raced another call.
/// With a `ManualClock` shared with the app's session, nothing recorded after a pause happens
/// until the test advances the clock.
///
/// A recorded restart of bluetoothd (the bus's `NameOwnerChanged` for `org.bluez`) is played
/// as one: the replay's connection closes (the bus tells the app, and fails the calls it left
/// unanswered) and its objects go; when the recording has `org.bluez` back, a new connection
/// (a new unique name) takes the name and serves the objects the recording adds from then on.
///
/// `@unchecked Sendable`: `state` is behind its lock; the tree, the exports and `connection`
/// (replaced at a replayed restart) are touched on `queue` only, but for the name request in
/// `start`, before the replay begins.
public final class BlueZReplayer: @unchecked Sendable {
    /// The recording played.
    public let scenario: BlueZScenario
    /// The bus address.
    public let busAddress: String
    let queue: DispatchQueue
    let clock: any TimerClock
    var connection: Connection
    let state: Locked<ReplayState>
    /// Recorded methods per path and interface: member → (input, output) signatures.
    let methodTable: [String: [String: [String: (DBusSignature, DBusSignature)]]]
    /// On `queue`: the current tree and its exports.
    var tree: [String: [String: [String: DBusValue]]]
    var handles: [String: ExportHandle] = [:]
    /// On `queue`: the app's unique name (the sender of its last call), for BlueZ's calls into it.
    var app: String?
    var tasks: [ClockTask] = []
    /// On `queue`: the next event of the recording, the recorded time it is timed from, whether
    /// a timer runs for it, and the app's calls waiting for their place (event index → responder).
    var cursor = 0
    var reference = Duration.zero
    var timerPending = false
    var deferred: [Int: Responder] = [:]
    /// On `queue`: responders of calls recorded without a reply (never answered; released at `stop()`).
    var held: [Responder] = []
    var stopped = false

    /// The name of the error answering a call that diverges from the recording.
    public static let divergedError = "org.bluecap.Replay.Diverged"

    /// Connects to `busAddress`, serves `scenario`'s tree and takes `org.bluez`; the signals
    /// recorded before the app's first call start on `clock` now (real time by default).
    /// Throws when the bus is unreachable or `org.bluez` is taken.
    /// `unordered` names the calls (`interface.member`) the app may make any number of times,
    /// anywhere: answered as recorded (or with success when never recorded), never awaited nor
    /// reported; by default ``defaultUnordered``.
    public static func start(busAddress: String, replaying scenario: BlueZScenario, clock: (any TimerClock)? = nil,
                             unordered: Set<String> = defaultUnordered) async throws -> BlueZReplayer {
        let replayer = try BlueZReplayer(busAddress: busAddress, scenario: scenario, clock: clock, unordered: unordered)
        let reply = try await replayer.connection.requestName(BlueZSimulator.busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            replayer.stop()
            throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.Failed",
                                  message: "\(BlueZSimulator.busName) is already owned on \(busAddress): stop the other simulator first")
        }
        replayer.queue.sync { replayer.begin() }
        return replayer
    }

    /// Calls an app may repeat or leave out from one run to the next without meaning anything:
    /// `org.bluez.Adapter1.StopDiscovery` (a library stops discovery when the scan stops and
    /// again before connecting, depending on which signal came first) and
    /// `org.bluez.Device1.Disconnect` (a program disconnects again as it shuts down when the
    /// first reply has not come yet; a recording often ends before that reply).
    public static let defaultUnordered: Set<String> = ["org.bluez.Adapter1.StopDiscovery", "org.bluez.Device1.Disconnect"]

    private init(busAddress: String, scenario: BlueZScenario, clock: (any TimerClock)?, unordered: Set<String>) throws {
        self.scenario = scenario
        self.busAddress = busAddress
        let queue = DispatchQueue(label: "bluez-replay")
        self.queue = queue
        self.clock = clock.map { QueueClock($0, queue: queue) } ?? SystemClock(queue: queue)
        connection = try Connection(address: busAddress)
        state = Locked(ReplayState(events: scenario.events, unordered: unordered))
        tree = scenario.objects
        var table: [String: [String: [String: (DBusSignature, DBusSignature)]]] = [:]
        for case .call(_, let m, let outcome, _) in scenario.events where !ReplayState.isFree(m) {
            let output: [DBusValue] = if case .reply(let values) = outcome { values } else { [] }
            if table[m.path]?[m.interface]?[m.member] == nil {
                table[m.path, default: [:]][m.interface, default: [:]][m.member] =
                    (DBusSignature(types: m.arguments.map(\.type)), DBusSignature(types: output.map(\.type)))
            }
        }
        methodTable = table
        queue.sync { exportAll() }
    }

    /// A new `BluetoothSession` on the replay's bus for the app under test; pass the
    /// `ManualClock` the replay was started with as `clock` to drive both sides.
    public func session(context: any ExecutionContext = .futuresDefault,
                        clock: any TimerClock = SystemClock.shared) -> BluetoothSession {
        BluetoothSession(bus: .address(busAddress), context: context, clock: clock)
    }

    /// What of the recording the app never reached, and every divergence so far.
    public var report: ReplayReport { state.withLock { $0.report } }

    /// Cancels what is scheduled, releases the name and closes the connection. Idempotent.
    public func stop() {
        queue.sync {
            guard !stopped else { return }
            stopped = true
            for t in tasks { t.cancel() }
            tasks.removeAll()
            for h in handles.values { h.unexport() }
            handles.removeAll()
            held.removeAll()
            deferred.removeAll()
            connection.close()
        }
    }

    deinit { connection.close() }

    // MARK: Schedule

    /// Starts the replay's cursor (on `queue`).
    private func begin() { advance() }

    /// Moves the cursor through the recording in its order (on `queue`): each signal (or call
    /// into the app) at its recorded distance from the event before it; each call of the app
    /// waits there until the app makes it. Its reply goes out in its place: after the events
    /// recorded before it and the signals recorded while it was in flight.
    func advance() {
        let events = scenario.events
        while !stopped, !timerPending, cursor < events.count {
            switch events[cursor] {
            case .call(let at, let m, let outcome, let latency):
                if ReplayState.isFree(m) || state.withLock({ $0.racing[cursor] }) {
                    cursor += 1
                } else if let responder = deferred.removeValue(forKey: cursor) {
                    let reply = at + latency
                    var next = cursor + 1
                    while next < events.count, !events[next].isCall, events[next].at < reply {
                        perform(next)
                        next += 1
                    }
                    respond(responder, outcome)
                    reference = max(reference, reply)
                    cursor = next
                } else if state.withLock({ $0.reached[cursor] }) {
                    reference = max(reference, at)  // answered out of order already
                    cursor += 1
                } else {
                    return  // the app has not made this call yet
                }
            case .signal(let at, _), .incoming(let at, _, _):
                let delay = at - reference
                if delay <= .zero {
                    perform(cursor)
                    cursor += 1
                    continue
                }
                timerPending = true
                let index = cursor
                tasks.append(clock.schedule(after: delay) { [weak self] in
                    guard let self, !self.stopped else { return }
                    self.timerPending = false
                    self.perform(index)
                    self.reference = at
                    self.cursor = index + 1
                    self.advance()
                })
                return
            }
        }
    }
}
