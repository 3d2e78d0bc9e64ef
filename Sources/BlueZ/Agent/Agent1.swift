// org.bluez.Agent1: the pairing agent this process exports for bluetoothd to call.
import DBus
import Foundation

// MARK: - AgentRequest

/// One call bluetoothd makes on an exported `org.bluez.Agent1`.
public enum AgentRequest: Sendable, Equatable, CustomStringConvertible {
    /// `RequestPinCode(device)`: answer ``AgentReply/pinCode(_:)`` (1-16 characters; legacy BR/EDR).
    case requestPinCode(device: ObjectPath)
    /// `DisplayPinCode(device, pincode)`: show it; answer ``AgentReply/accept``.
    case displayPinCode(device: ObjectPath, pinCode: String)
    /// `RequestPasskey(device)`: answer ``AgentReply/passkey(_:)`` (0-999999).
    case requestPasskey(device: ObjectPath)
    /// `DisplayPasskey(device, passkey, entered)`: show it (`entered` keys typed so far on the
    /// remote side); no answer is expected.
    case displayPasskey(device: ObjectPath, passkey: UInt32, entered: UInt16)
    /// `RequestConfirmation(device, passkey)`: does the remote side show the same passkey?
    case requestConfirmation(device: ObjectPath, passkey: UInt32)
    /// `RequestAuthorization(device)`: may this device pair (Just Works, incoming)?
    case requestAuthorization(device: ObjectPath)
    /// `AuthorizeService(device, uuid)`: may this device use the service?
    case authorizeService(device: ObjectPath, uuid: String)

    /// The device the request is about.
    public var device: ObjectPath {
        switch self {
        case .requestPinCode(let d), .displayPinCode(let d, _), .requestPasskey(let d), .displayPasskey(let d, _, _),
             .requestConfirmation(let d, _), .requestAuthorization(let d), .authorizeService(let d, _):
            return d
        }
    }

    /// The `Agent1` method name.
    public var method: String {
        switch self {
        case .requestPinCode: "RequestPinCode"
        case .displayPinCode: "DisplayPinCode"
        case .requestPasskey: "RequestPasskey"
        case .displayPasskey: "DisplayPasskey"
        case .requestConfirmation: "RequestConfirmation"
        case .requestAuthorization: "RequestAuthorization"
        case .authorizeService: "AuthorizeService"
        }
    }

    public var description: String { "\(method)(\(device))" }
}

/// The device argument every agent call starts with.
private func agentDevice(_ v: [DBusValue]) throws(DBusDecodingError) -> ObjectPath { try ObjectPath(dbusValue: v[0]) }

// MARK: - AgentReply

/// The answer to an ``AgentRequest``.
public enum AgentReply: Sendable, Equatable {
    /// Yes (confirmation, authorization, display requests).
    case accept
    /// The PIN code for ``AgentRequest/requestPinCode(device:)``.
    case pinCode(String)
    /// The passkey for ``AgentRequest/requestPasskey(device:)``.
    case passkey(UInt32)
    /// No: `org.bluez.Error.Rejected` (the pairing fails with `AuthenticationRejected`).
    case reject
    /// Gave up: `org.bluez.Error.Canceled` (the pairing fails with `AuthenticationCanceled`).
    case cancel
}

/// Answers one agent call, once; a second answer is ignored. An answer of the wrong shape (a
/// passkey to a confirmation) is sent as `org.bluez.Error.Rejected`.
public final class AgentResponder: Sendable {
    /// The request being answered.
    public let request: AgentRequest
    private let responder: Responder

    init(request: AgentRequest, responder: Responder) {
        self.request = request
        self.responder = responder
    }

    /// Sends `reply` to bluetoothd.
    public func reply(_ reply: AgentReply) {
        switch (request, reply) {
        case (.requestPinCode, .pinCode(let pin)) where (1...16).contains(pin.utf8.count):
            responder.succeed([.string(pin)])
        case (.requestPasskey, .passkey(let key)) where key <= 999_999:
            responder.succeed([.uint32(key)])
        case (.displayPinCode, .accept), (.displayPasskey, .accept), (.requestConfirmation, .accept),
             (.requestAuthorization, .accept), (.authorizeService, .accept):
            responder.succeed()
        case (_, .cancel):
            responder.fail(name: "org.bluez.Error.Canceled", message: "Canceled by the agent")
        case (_, .reject):
            responder.fail(name: "org.bluez.Error.Rejected", message: "Rejected by the agent")
        default:
            responder.fail(name: "org.bluez.Error.Rejected", message: "the agent answered \(request.method) with \(reply)")
        }
    }
}

// MARK: - LocalAgent

/// A pairing agent to export: `org.bluez.Agent1` at ``path``, registered with
/// `org.bluez.AgentManager1.RegisterAgent(path, capability)`.
///
/// ``handler`` receives every request with a responder to answer when it has decided (bluetoothd
/// waits; it gives up after its own timeout and then calls `Cancel`). ``canceled`` runs for
/// `Cancel` (the request in progress was abandoned), ``released`` for `Release` (bluetoothd
/// unregistered the agent).
public struct LocalAgent: Sendable {
    /// The agent's object path.
    public var path: ObjectPath
    /// The input/output capability announced to bluetoothd.
    public var capability: AgentCapability
    /// Receives each request (on the connection's owner thread: answer later, never block).
    public var handler: @Sendable (AgentResponder) -> Void
    /// `Agent1.Cancel`.
    public var canceled: @Sendable () -> Void
    /// `Agent1.Release`.
    public var released: @Sendable () -> Void

    /// An agent.
    public init(path: ObjectPath, capability: AgentCapability, handler: @escaping @Sendable (AgentResponder) -> Void,
                canceled: @escaping @Sendable () -> Void = {}, released: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.capability = capability
        self.handler = handler
        self.canceled = canceled
        self.released = released
    }

    /// Exports the agent on `connection` (only `allowedCaller`, the unique name of `org.bluez`,
    /// may call it; others get `AccessDenied`), then calls `RegisterAgent` and, when `asDefault`,
    /// `RequestDefaultAgent`. On failure the agent is unexported again.
    public func register(on connection: Connection, allowedCaller: String, asDefault: Bool,
                         timeout: Duration = .seconds(10)) async throws(BlueZError) -> AgentHandle {
        let handle = AgentHandle(agent: self, connection: connection, asDefault: asDefault)
        try await handle.registration.exportAndRegister(allowedCaller: allowedCaller, timeout: timeout)
        return handle
    }

    /// The exported interface: each method turns its arguments into an ``AgentRequest``.
    func dbusInterface() -> DBusInterface {
        let handler = self.handler
        func method(_ name: String, _ input: DBusSignature, _ output: DBusSignature = .empty,
                    _ decode: @escaping @Sendable ([DBusValue]) throws(DBusDecodingError) -> AgentRequest) -> DBusMethod {
            DBusMethod(name, input: input, output: output) { call, responder in
                do {
                    handler(AgentResponder(request: try decode(call.body), responder: responder))
                } catch {
                    responder.fail(name: "org.bluez.Error.Rejected", message: "\(error)")
                }
            }
        }
        let canceled = self.canceled, released = self.released
        return DBusInterface(name: "org.bluez.Agent1", methods: [
            DBusMethod("Release") { _, r in released(); r.succeed() },
            method("RequestPinCode", "o", "s") { v throws(DBusDecodingError) in .requestPinCode(device: try agentDevice(v)) },
            method("DisplayPinCode", "os") { v throws(DBusDecodingError) in
                .displayPinCode(device: try agentDevice(v), pinCode: try String(dbusValue: v[1]))
            },
            method("RequestPasskey", "o", "u") { v throws(DBusDecodingError) in .requestPasskey(device: try agentDevice(v)) },
            method("DisplayPasskey", "ouq") { v throws(DBusDecodingError) in
                .displayPasskey(device: try agentDevice(v), passkey: try UInt32(dbusValue: v[1]), entered: try UInt16(dbusValue: v[2]))
            },
            method("RequestConfirmation", "ou") { v throws(DBusDecodingError) in
                .requestConfirmation(device: try agentDevice(v), passkey: try UInt32(dbusValue: v[1]))
            },
            method("RequestAuthorization", "o") { v throws(DBusDecodingError) in .requestAuthorization(device: try agentDevice(v)) },
            method("AuthorizeService", "os") { v throws(DBusDecodingError) in
                .authorizeService(device: try agentDevice(v), uuid: try String(dbusValue: v[1]))
            },
            DBusMethod("Cancel") { _, r in canceled(); r.succeed() },
        ])
    }
}
