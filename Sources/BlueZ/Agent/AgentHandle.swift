// AgentHandle: a registered (and exported) LocalAgent.
import DBus

/// A registered ``LocalAgent``: its ``registration`` (``Registration``) with
/// `org.bluez.AgentManager1`. ``unregister(timeout:)`` calls `AgentManager1.UnregisterAgent` and
/// removes the object; releasing the handle removes the object (bluetoothd drops an agent whose
/// object is gone, or whose connection closed).
public final class AgentHandle: Sendable {
    /// The agent.
    public let agent: LocalAgent
    /// Whether `RequestDefaultAgent` is part of each registration.
    public let asDefault: Bool
    /// The export and the registration with `org.bluez.AgentManager1`.
    public let registration: Registration

    init(agent: LocalAgent, connection: Connection, asDefault: Bool) {
        self.agent = agent
        self.asDefault = asDefault
        registration = Registration(connection: connection, calls: agent.calls(asDefault: asDefault))
    }

    /// Whether `RegisterAgent` succeeded and no unregistration (or owner change) happened since.
    public var isRegistered: Bool { registration.isRegistered }

    /// Calls `org.bluez.AgentManager1.UnregisterAgent` (when registered), then removes the object.
    /// Idempotent; returns the unregistration error, if any (the object is removed regardless).
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        await registration.unregister(timeout: timeout)
    }
}

extension LocalAgent {
    /// The registration's calls: the `Agent1` object at ``path``, `RegisterAgent(path, capability)`
    /// (then `RequestDefaultAgent(path)` when `asDefault`) and `UnregisterAgent(path)`.
    func calls(asDefault: Bool) -> RegistrationCalls {
        let path = self.path, capability = self.capability, interface = dbusInterface()
        return RegistrationCalls(
            path: path,
            export: { registration, caller throws(BlueZError) in
                do {
                    return [try registration.connection.export([interface], at: path, allowedCaller: caller)]
                } catch {
                    throw BlueZError(kind: .alreadyExists, message: "\(error)", operation: "export org.bluez.Agent1", path: path.rawValue)
                }
            },
            register: { connection, timeout throws(BlueZError) in
                try await AgentManager1(connection: connection).registerAgent(path, capability: capability, timeout: timeout)
            },
            afterRegister: asDefault ? RegistrationCalls.bluez(AgentManager1.path, AgentManager1.interface, "RequestDefaultAgent",
                                                               [.objectPath(path)]) : nil,
            unregister: { connection, timeout throws(BlueZError) in
                try await AgentManager1(connection: connection).unregisterAgent(path, timeout: timeout)
            })
    }
}
