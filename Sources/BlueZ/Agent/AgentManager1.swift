// org.bluez.AgentManager1: registering pairing agents with bluetoothd.
import DBus

/// A proxy for `org.bluez.AgentManager1` at `/org/bluez`.
///
/// bluetoothd asks an agent to take part in pairing: the agent of the process that called
/// `Device1.Pair` for that pairing, the default agent for everything else (incoming pairing,
/// pairing the kernel starts to raise a link's security). The D-Bus policy decides who may call
/// these methods (`/etc/dbus-1/system.d/bluetooth.conf` or `/usr/share/dbus-1/system.d/`):
/// refused calls fail with ``BlueZError/Kind/accessDenied``.
public struct AgentManager1: Sendable {
    /// `org.bluez.AgentManager1`.
    public static let interface = "org.bluez.AgentManager1"
    /// The object implementing it.
    public static let path: ObjectPath = "/org/bluez"

    /// The connection calls go through (the agent must be exported on the same connection).
    public let connection: Connection

    /// A proxy over `connection`.
    public init(connection: Connection) { self.connection = connection }

    /// Calls `org.bluez.AgentManager1.RegisterAgent(agent, capability)`. Fails with
    /// `AlreadyExists` when this connection already registered an agent at `agent`.
    public func registerAgent(_ agent: ObjectPath, capability: AgentCapability, timeout: Duration = .seconds(10)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: Self.path, interface: Self.interface, member: "RegisterAgent",
                                           arguments: [.objectPath(agent), .string(capability.rawValue)], timeout: timeout)
    }

    /// Calls `org.bluez.AgentManager1.UnregisterAgent(agent)`.
    public func unregisterAgent(_ agent: ObjectPath, timeout: Duration = .seconds(10)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: Self.path, interface: Self.interface, member: "UnregisterAgent",
                                           arguments: [.objectPath(agent)], timeout: timeout)
    }

    /// Calls `org.bluez.AgentManager1.RequestDefaultAgent(agent)`: the agent answers the requests
    /// no `Pair` caller owns (incoming pairing, the responder side). Its IO capability becomes the
    /// adapters' default.
    public func requestDefaultAgent(_ agent: ObjectPath, timeout: Duration = .seconds(10)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: Self.path, interface: Self.interface, member: "RequestDefaultAgent",
                                           arguments: [.objectPath(agent)], timeout: timeout)
    }
}

/// An agent's input/output capability (`RegisterAgent`'s second argument). The capabilities of
/// both sides decide the pairing method: Just Works, passkey entry, or numeric comparison.
public enum AgentCapability: String, Sendable, CaseIterable {
    /// `DisplayOnly`: can show a passkey.
    case displayOnly = "DisplayOnly"
    /// `DisplayYesNo`: can show a passkey and take a yes/no answer (numeric comparison).
    case displayYesNo = "DisplayYesNo"
    /// `KeyboardOnly`: can enter a passkey.
    case keyboardOnly = "KeyboardOnly"
    /// `NoInputNoOutput`: neither (Just Works; no protection against a man in the middle).
    case noInputNoOutput = "NoInputNoOutput"
    /// `KeyboardDisplay`: both.
    case keyboardDisplay = "KeyboardDisplay"
}
