// A connection to a D-Bus message bus.
import Dispatch
import Glibc
import Locking

/// A private connection to a message bus, run by its own owner thread.
///
/// Every libdbus call for the connection happens on that thread; methods here may be called
/// from any thread. Callbacks (call completions, signal handlers, method handlers) run on the
/// owner thread: they must not block (a blocking call made there throws).
/// Close the connection with `close()`; releasing the last reference closes it too.
public final class Connection: Sendable {
    let core: ConnectionCore
    /// Runs the jobs of tasks that prefer it on the owner thread (see ``ConnectionTaskExecutor``).
    public let taskExecutor: ConnectionTaskExecutor

    /// Every call's default timeout.
    public static let defaultTimeout: Duration = .seconds(25)

    /// Which bus to connect to.
    public enum Bus: Sendable {
        /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else `unix:path=/run/dbus/system_bus_socket`.
        case system
        /// The session bus: `DBUS_SESSION_BUS_ADDRESS`.
        case session
        /// A bus at this address.
        case address(String)
    }

    /// Opens a private connection (`dbus_connection_open_private`) and registers with the bus
    /// (`dbus_bus_register`, i.e. `org.freedesktop.DBus.Hello`).
    /// Throws `DBusConnectionError` naming the bus and address when it cannot connect.
    public init(_ bus: Bus) throws(DBusConnectionError) {
        let address: String
        let label: String
        switch bus {
        case .system:
            label = "the system bus"
            address = Connection.environment("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
        case .session:
            label = "the session bus"
            guard let a = Connection.environment("DBUS_SESSION_BUS_ADDRESS") else {
                throw DBusConnectionError(address: "", message: "cannot connect to the session bus: DBUS_SESSION_BUS_ADDRESS is not set")
            }
            address = a
        case .address(let a):
            label = "the bus"
            address = a
        }
        let raw: RawConnection
        do {
            raw = try LibDBus.openPrivate(address)
        } catch {
            throw DBusConnectionError(address: address, message: "cannot connect to \(label) at \(address): \(error.message)")
        }
        do {
            try LibDBus.busRegister(raw)
        } catch {
            LibDBus.close(raw)
            LibDBus.unref(connection: raw)
            throw DBusConnectionError(address: address, message: "cannot register with \(label) at \(address): \(error.message)")
        }
        LibDBus.setExitOnDisconnect(raw, false)
        core = ConnectionCore(raw: raw, uniqueName: LibDBus.uniqueName(raw) ?? "", address: address)
        taskExecutor = ConnectionTaskExecutor(core: core)
        core.start()
    }

    /// Connects to the bus at `address`.
    public convenience init(address: String) throws(DBusConnectionError) { try self.init(.address(address)) }

    deinit { core.close() }

    private static func environment(_ name: String) -> String? {
        guard let p = getenv(name), p.pointee != 0 else { return nil }
        return String(cString: p)
    }

    /// The unique name the bus assigned (e.g. `:1.42`).
    public var uniqueName: String { core.uniqueName }
    /// The bus address.
    public var address: String { core.address }
    /// False once `close()` has run.
    public var isOpen: Bool { !core.isClosed.load(ordering: .sequentiallyConsistent) }
    /// True on the connection's owner thread (where callbacks run).
    public var isOnOwnerThread: Bool { core.isOwnerThread }

    /// Closes the connection (`dbus_connection_close`, then the last unref): pending calls fail
    /// with `DBusCallError.disconnected`, exports and subscriptions end. Idempotent.
    public func close() { core.close() }

    /// Runs `body` on the owner thread, in order with the connection's other work.
    public func execute(_ body: @escaping @Sendable () -> Void) { core.perform(body) }

    // MARK: - Method calls

    /// Calls `interface.member` on `path` at `destination`; `completion` runs on the owner thread
    /// with the reply, a `.remote` error reply, `.timeout(after:)` or `.disconnected`.
    public func call(
        destination: String?, path: ObjectPath, interface: String?, member: String,
        arguments: [DBusValue] = [], timeout: Duration = Connection.defaultTimeout,
        completion: @escaping @Sendable (Result<Message, DBusCallError>) -> Void
    ) {
        do {
            let m = try MessageBuilder.methodCall(destination: destination, path: path, interface: interface,
                                                  member: member, arguments: arguments)
            core.call(m, timeout: timeout, completion: completion)
        } catch {
            completion(.failure(error))
        }
    }

    /// Calls `interface.member` and awaits the reply.
    public func call(
        destination: String?, path: ObjectPath, interface: String?, member: String,
        arguments: [DBusValue] = [], timeout: Duration = Connection.defaultTimeout
    ) async throws(DBusCallError) -> Message {
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<Message, DBusCallError>, Never>) in
            call(destination: destination, path: path, interface: interface, member: member,
                 arguments: arguments, timeout: timeout) { c.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Calls `interface.member` and blocks the calling thread until the reply. For simple tools;
    /// throws `.blockingOnOwnerThread` when called from a callback of this connection.
    public func callBlocking(
        destination: String?, path: ObjectPath, interface: String?, member: String,
        arguments: [DBusValue] = [], timeout: Duration = Connection.defaultTimeout
    ) throws(DBusCallError) -> Message {
        guard !core.isOwnerThread else { throw .blockingOnOwnerThread }
        let waiter = BlockingWaiter<Result<Message, DBusCallError>>()
        call(destination: destination, path: path, interface: interface, member: member,
             arguments: arguments, timeout: timeout) { waiter.put($0) }
        return try waiter.take().get()
    }

    // MARK: - Signals

    /// Emits a signal (`dbus_message_new_signal`); `destination` makes it unicast.
    public func emitSignal(
        path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusCallError) {
        let m = try MessageBuilder.signal(path: path, interface: interface, member: member,
                                          arguments: arguments, destination: destination)
        core.send(m)
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` on `path`.
    public func emitPropertiesChanged(
        path: ObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String] = []
    ) throws(DBusCallError) {
        try emitSignal(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                       arguments: [.string(interface), .properties(changed),
                                   .array(element: .string, invalidated.map { .string($0) })])
    }

    // MARK: - Names

    /// Flags for `requestName` (`DBUS_NAME_FLAG_*`).
    public struct NameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let allowReplacement = NameFlags(rawValue: 1)
        public static let replaceExisting = NameFlags(rawValue: 2)
        public static let doNotQueue = NameFlags(rawValue: 4)
    }

    /// `org.freedesktop.DBus.RequestName` replies.
    public enum RequestNameReply: UInt32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// Requests a well-known name (`org.freedesktop.DBus.RequestName`).
    public func requestName(_ name: String, flags: NameFlags = [.doNotQueue]) async throws(DBusCallError) -> RequestNameReply {
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", member: "RequestName",
                                   arguments: [.string(name), .uint32(flags.rawValue)])
        guard let code = try? reply.body.decode(UInt32.self, at: 0), let r = RequestNameReply(rawValue: code) else {
            throw .invalidMessage("unexpected RequestName reply \(reply.body)")
        }
        return r
    }

    /// Releases a well-known name (`org.freedesktop.DBus.ReleaseName`); returns the reply code
    /// (1 released, 2 non-existent, 3 not owner).
    @discardableResult
    public func releaseName(_ name: String) async throws(DBusCallError) -> UInt32 {
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", member: "ReleaseName", arguments: [.string(name)])
        guard let code = try? reply.body.decode(UInt32.self, at: 0) else {
            throw .invalidMessage("unexpected ReleaseName reply \(reply.body)")
        }
        return code
    }

    /// Counters for diagnostics and tests: AddMatch / RemoveMatch calls sent so far.
    package var matchRuleCounters: (addMatch: Int, removeMatch: Int) {
        core.stats.withLock { ($0.addMatchSent, $0.removeMatchSent) }
    }
}

/// A one-shot hand-off from a callback to a blocked thread.
final class BlockingWaiter<T: Sendable>: Sendable {
    private let box = Locked<T?>(nil)
    private let semaphore = DispatchSemaphore(value: 0)
    func put(_ value: T) {
        box.withLock { $0 = value }
        semaphore.signal()
    }
    func take() -> T {
        semaphore.wait()
        return box.withLock { $0! }
    }
}
