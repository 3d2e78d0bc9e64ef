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
/// Timing: a signal hangs on the last call of the app recorded before it, and goes out once
/// that call is answered, at its recorded distance from the recorded reply (signals recorded
/// before the reply go out right before it). Replies are immediate. With a `ManualClock`
/// shared with the app's session, nothing recorded after a reply happens until the test
/// advances the clock.
///
/// `@unchecked Sendable`: `state` is behind its lock; the tree and the exports are touched on
/// `queue` only.
public final class BlueZReplayer: @unchecked Sendable {
    /// The recording played.
    public let scenario: BlueZScenario
    /// The bus address.
    public let busAddress: String
    let queue: DispatchQueue
    let clock: any TimerClock
    let connection: Connection
    let state: Locked<ReplayState>
    /// Recorded methods per path and interface: member → (input, output) signatures.
    let methodTable: [String: [String: [String: (DBusSignature, DBusSignature)]]]
    /// On `queue`: the current tree and its exports.
    var tree: [String: [String: [String: DBusValue]]]
    var handles: [String: ExportHandle] = [:]
    /// On `queue`: the app's unique name (the sender of its last call), for BlueZ's calls into it.
    var app: String?
    var tasks: [ClockTask] = []
    /// On `queue`: responders of calls recorded without a reply (never answered; released at `stop()`).
    var held: [Responder] = []
    var stopped = false

    /// The name of the error answering a call that diverges from the recording.
    public static let divergedError = "org.bluecap.Replay.Diverged"

    /// Connects to `busAddress`, serves `scenario`'s tree and takes `org.bluez`; the signals
    /// recorded before the app's first call start on `clock` now (real time by default).
    /// Throws when the bus is unreachable or `org.bluez` is taken.
    public static func start(busAddress: String, replaying scenario: BlueZScenario,
                             clock: (any TimerClock)? = nil) async throws -> BlueZReplayer {
        let replayer = try BlueZReplayer(busAddress: busAddress, scenario: scenario, clock: clock)
        let reply = try await replayer.connection.requestName(BlueZSimulator.busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            replayer.stop()
            throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.Failed",
                                  message: "\(BlueZSimulator.busName) is already owned on \(busAddress): stop the other simulator first")
        }
        replayer.queue.sync { replayer.begin() }
        return replayer
    }

    private init(busAddress: String, scenario: BlueZScenario, clock: (any TimerClock)?) throws {
        self.scenario = scenario
        self.busAddress = busAddress
        let queue = DispatchQueue(label: "bluez-replay")
        self.queue = queue
        self.clock = clock.map { QueueClock($0, queue: queue) } ?? SystemClock(queue: queue)
        connection = try Connection(address: busAddress)
        state = Locked(ReplayState(events: scenario.events))
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
            connection.close()
        }
    }

    deinit { connection.close() }

    // MARK: Schedule

    /// Starts the events recorded before the app's first call (on `queue`).
    private func begin() {
        let initial = state.withLock { $0.initial }
        chain(initial.map { (index: $0, delay: scenario.events[$0].at) })
    }

    /// Sends `items` in order, each at its delay from now (on `queue`); `last` is the delay
    /// already waited.
    func chain(_ items: [(index: Int, delay: Duration)], since last: Duration = .zero) {
        guard !stopped, let item = items.first else { return }
        let rest = Array(items.dropFirst())
        let wait = item.delay - last
        if wait <= .zero {
            perform(item.index)
            chain(rest, since: last)
        } else {
            tasks.append(clock.schedule(after: wait) { [weak self] in
                guard let self else { return }
                self.perform(item.index)
                self.chain(rest, since: item.delay)
            })
        }
    }
}
