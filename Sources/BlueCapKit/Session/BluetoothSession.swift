// BluetoothSession: the root every manager, adapter list and agent of a process hangs from.
import BlueZ
import DBus
import Foundation
import Futures
import Locking

/// One connection to BlueZ for a whole program: the bus connection, its owner thread, the one
/// cache of bluetoothd's objects, the clock that times every deadline and the default context
/// where callbacks run.
///
/// Every ``CentralManager``, ``PeripheralManager``, ``Adapters`` list and ``PairingAgent``
/// registration takes a session. Those made without one share ``default``, so a gateway that
/// scans, connects, serves GATT and pairs in one process opens **one** bus connection, runs one
/// owner thread, and decodes each of bluetoothd's signals once:
///
/// ```swift
/// let central = CentralManager()                  // BluetoothSession.default
/// let peripheral = PeripheralManager(adapter: "hci1")
/// let adapters = Adapters()                       // the same connection, the same object cache
/// ```
///
/// A test (or a program with its own bus) makes its own session, on the system bus or a bus at
/// an address, and may give it a `ManualClock`; `BlueZSimulator` hands out sessions for its bus.
///
/// ``close(timeout:)`` ends every manager made on the session cleanly — scans stopped,
/// peripherals disconnected, GATT applications and advertisements unregistered, agents
/// unregistered — and then closes the connection.
///
/// When the bus cannot be reached the session still exists: its managers report
/// `.unsupported` and their operations fail with `BlueCapError.Kind.busUnavailable` naming
/// ``unavailableReason``.
public final class BluetoothSession: Sendable {
    /// Which bus a session connects to.
    public enum Bus: Sendable, Equatable, CustomStringConvertible {
        /// The system bus, where bluetoothd runs: `DBUS_SYSTEM_BUS_ADDRESS`, else
        /// `unix:path=/run/dbus/system_bus_socket`.
        case system
        /// A bus at this D-Bus address (`unix:path=/tmp/…`): a private bus with `BlueZSimulator`.
        case address(String)

        /// `system bus` or the address.
        public var description: String {
            switch self {
            case .system: return "system bus"
            case .address(let a): return a
            }
        }
    }

    /// The bus the session is connected to.
    public let bus: Bus
    /// Where callbacks run unless an operation or manager is given another context; its timers
    /// (`timeout(after:)`, `retry`, `debounce` on futures completed here) run on ``clock``.
    public let context: any ExecutionContext
    /// What times every deadline of the managers on the session: power-on waits, scan and
    /// connection timeouts, retry backoff, reconnection delays, GATT and agent request timeouts.
    public let clock: any TimerClock
    /// The connection (nil when the bus could not be reached).
    let connection: Connection?
    /// bluetoothd's objects, cached once for every manager on the session.
    let tree: ObjectTree?
    /// Why the bus could not be reached, when it could not.
    private let failure: String?
    /// What the session's pairing agent refused (``Peripheral/pair(timeout:)`` reports it).
    let agentRefusals: AgentRefusals
    /// Each adapter's budget of LE connections and the connects waiting for one (see
    /// ``ConnectionSlots``): every ``Peripheral`` connect of the session goes through it.
    public let connectionSlots: ConnectionSlots
    /// Which adapters answer `Adapter1.ConnectDevice` (``CentralManager/connect(address:addressType:timeout:)``).
    let connectDeviceSupport = ConnectDeviceSupport()
    /// The links no manager of the session made (see BluetoothSession+ForeignConnections).
    let foreignWatch = ForeignConnectionWatch()

    private struct State {
        var closed = false
        var members: [ObjectIdentifier: WeakMember] = [:]
        /// Completed once ``close(timeout:)`` has closed the connection (made by the first close).
        var closing: Promise<Void>?
    }
    // Sendable through this lock; members are told of the close outside it.
    private let state = Locked(State())

    private struct WeakMember { weak var member: (any SessionMember)? }

    // MARK: - Opening

    /// Connects to `bus` (the system bus by default). Does not throw: when the bus cannot be
    /// reached, ``unavailableReason`` says why and the managers made on the session report it.
    /// `clock` times every deadline (a `ManualClock` in tests); `context` is where callbacks run
    /// by default (the library's serial queue).
    public init(bus: Bus = .system, context: any ExecutionContext = .futuresDefault,
                clock: any TimerClock = SystemClock.shared) {
        self.bus = bus
        self.context = ClockedContext(context, clock: clock)
        self.clock = clock
        self.agentRefusals = AgentRefusals(clock: clock)
        do {
            let connection = try Connection(bus.connectionBus)
            self.connection = connection
            self.tree = ObjectTree.shared(for: connection)
            self.failure = nil
        } catch {
            self.connection = nil
            self.tree = nil
            self.failure = error.description
        }
        self.connectionSlots = ConnectionSlots(tree: tree, clock: clock)
    }

    deinit { connection?.close() }

    private static let shared = Locked<BluetoothSession?>(nil)

    /// The process-wide session on the system bus that every manager, adapter list and agent made
    /// without a session shares. Made on first use; when it was closed, or could not reach the
    /// bus, the next use opens a new one.
    public static var `default`: BluetoothSession {
        shared.withLock { current in
            if let s = current, s.isOpen { return s }
            let s = BluetoothSession()
            current = s
            return s
        }
    }

    /// Makes `session` the process-wide default (nil: the next use opens one on the system bus),
    /// for the package's own tests of what managers made without a session share.
    @_spi(Testing) public static func replaceDefault(with session: BluetoothSession?) {
        shared.withLock { $0 = session }
    }

    // MARK: - State

    /// Whether the session is connected and not closed.
    public var isOpen: Bool { connection?.isOpen == true && !state.withLock { $0.closed } }

    /// Why the bus cannot be used: libdbus's reason when it could not be reached
    /// ("Failed to connect to socket /run/dbus/system_bus_socket: …"), or that the session was
    /// closed. Nil while the session is open.
    public var unavailableReason: String? {
        if let failure { return failure }
        if state.withLock({ $0.closed }) { return "the BluetoothSession was closed" }
        if connection?.isOpen == false { return "the connection to the \(bus) was closed" }
        return nil
    }

    /// The bus connection's unique name (`:1.42`), for logs; nil without a connection.
    public var uniqueName: String? { connection?.uniqueName }

    /// The D-Bus connection itself, for the package's own tests (closing it under a manager,
    /// counting its match rules). Not API: the D-Bus layer is no promise.
    @_spi(Testing) public var busConnection: Connection? { connection }

    // MARK: - Members

    /// Adds a manager, adapter list or agent registration, told when the session closes (held
    /// weakly). Returns false when the session is already closed.
    @discardableResult
    func join(_ member: any SessionMember) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            if s.members.count > 64 { s.members = s.members.filter { $0.value.member != nil } }
            s.members[ObjectIdentifier(member)] = WeakMember(member: member)
            return true
        }
    }

    /// Removes a member (it ended by itself).
    func leave(_ member: any SessionMember) {
        state.withLock { _ = $0.members.removeValue(forKey: ObjectIdentifier(member)) }
    }

    /// The members alive now.
    var members: [any SessionMember] {
        state.withLock { $0.members.values.compactMap(\.member) }
    }

    // MARK: - Closing

    /// Ends every manager, adapter list and agent registration made on the session, then closes
    /// the bus connection. Central managers stop scanning and disconnect their peripherals,
    /// peripheral managers stop advertising and unregister their GATT application
    /// (`org.bluez.LEAdvertisingManager1.UnregisterAdvertisement`,
    /// `org.bluez.GattManager1.UnregisterApplication`), agents are unregistered
    /// (`org.bluez.AgentManager1.UnregisterAgent`). Each member gets at most `timeout`; the
    /// connection is closed when all have ended or the time is up. Idempotent: a second call
    /// completes when the first has.
    @discardableResult
    public func close(timeout: Duration = .seconds(5)) -> Future<Void> {
        let (closing, members) = state.withLock { s -> (Promise<Void>, [any SessionMember]?) in
            if let closing = s.closing { return (closing, nil) }
            let closing = Promise<Void>()
            defer { s.closed = true; s.members = [:]; s.closing = closing }
            return (closing, s.members.values.compactMap(\.member))
        }
        guard let members else { return closing.future }
        let endings = members.map { $0.sessionClosing(timeout: timeout) }
        let deadline = clock.schedule(after: timeout + .milliseconds(500)) { [self] in self.finishClose(closing) }
        endings.sequence(context: .immediate).onComplete(context: .immediate) { [self] _ in
            deadline.cancel()
            self.finishClose(closing)
        }
        return closing.future
    }

    /// Closes the connection once the members have ended (or the time is up), then completes `closing`.
    private func finishClose(_ closing: Promise<Void>) {
        guard !closing.isCompleted else { return }
        foreignWatch.finish()
        tree?.stop()
        connection?.close()
        closing.success(())
    }
}

// MARK: - Bus

extension BluetoothSession.Bus {
    /// The D-Bus connection's bus.
    var connectionBus: Connection.Bus {
        switch self {
        case .system: return .system
        case .address(let a): return .address(a)
        }
    }
}
