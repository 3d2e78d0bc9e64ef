// AgentHandle: a registered (and exported) LocalAgent.
import DBus
import Locking

/// A registered ``LocalAgent``. ``unregister(timeout:)`` calls `AgentManager1.UnregisterAgent`
/// and removes the object; releasing the handle removes the object (bluetoothd drops an agent
/// whose object is gone, or whose connection closed).
public final class AgentHandle: Sendable {
    /// The agent.
    public let agent: LocalAgent
    /// Whether `RequestDefaultAgent` is part of each registration.
    public let asDefault: Bool
    private let connection: Connection
    private struct State {
        var export: ExportHandle?
        var registered = false
    }
    // Sendable through this lock; no call is made while holding it.
    private let state: Locked<State>

    init(agent: LocalAgent, connection: Connection, export: ExportHandle, asDefault: Bool) {
        self.agent = agent
        self.connection = connection
        self.asDefault = asDefault
        state = Locked(State(export: export))
    }

    deinit { state.withLock { $0.export }?.unexport() }

    /// Whether `RegisterAgent` succeeded and no unregistration happened since.
    public var isRegistered: Bool { state.withLock { $0.registered } }

    /// The unique name allowed to call the agent; "" allows no one. Set it when `org.bluez`
    /// changes owner.
    public var allowedCaller: String? {
        get { state.withLock { $0.export?.allowedCaller } }
        set { state.withLock { $0.export }?.allowedCaller = newValue }
    }

    /// Registers the exported agent again (after bluetoothd restarted: a new bluetoothd knows no agent).
    public func reregister(allowedCaller: String, timeout: Duration = .seconds(10)) async throws(BlueZError) {
        state.withLock { $0.registered = false }
        self.allowedCaller = allowedCaller
        try await registerWithBlueZ(timeout: timeout)
    }

    func registerWithBlueZ(timeout: Duration) async throws(BlueZError) {
        guard state.withLock({ $0.export != nil }) else {
            throw BlueZError(kind: .doesNotExist, message: "the agent was unexported",
                             operation: "org.bluez.AgentManager1.RegisterAgent", path: agent.path.rawValue)
        }
        let manager = AgentManager1(connection: connection)
        try await manager.registerAgent(agent.path, capability: agent.capability, timeout: timeout)
        state.withLock { $0.registered = true }
        if asDefault {
            try await manager.requestDefaultAgent(agent.path, timeout: timeout)
        }
    }

    /// `AgentManager1.UnregisterAgent` (when registered), then removes the object. Idempotent;
    /// returns the unregistration error, if any (the object is removed regardless).
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        let (wasRegistered, export) = state.withLock { s in
            defer { s.registered = false; s.export = nil }
            return (s.registered, s.export)
        }
        var failure: BlueZError?
        if wasRegistered {
            do {
                try await AgentManager1(connection: connection).unregisterAgent(agent.path, timeout: timeout)
            } catch {
                failure = error
            }
        }
        export?.unexport()
        return failure
    }
}
