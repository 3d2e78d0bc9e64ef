// PairingModel: the simulated bluetoothd's pairing vocabulary — IO capabilities, the method
// they select, what a simulated peripheral does when paired with, and the agent calls.

import Timing

// MARK: - SimulatedIOCapability

/// An IO capability as `org.bluez.AgentManager1.RegisterAgent` names it.
public enum SimulatedIOCapability: String, Sendable, CaseIterable, Codable {
    /// Shows a passkey.
    case displayOnly = "DisplayOnly"
    /// Shows a passkey and takes yes/no.
    case displayYesNo = "DisplayYesNo"
    /// Enters a passkey.
    case keyboardOnly = "KeyboardOnly"
    /// Neither (Just Works).
    case noInputNoOutput = "NoInputNoOutput"
    /// Both.
    case keyboardDisplay = "KeyboardDisplay"
}

// MARK: - PairingMethod

/// The LE Secure Connections pairing method for two IO capabilities (Core spec Vol 3 Part H
/// 2.3.5.1, table 2.8), as the kernel's SMP picks it.
enum PairingMethod: Equatable {
    /// Just Works: no passkey; a responder with an agent is asked `RequestAuthorization`.
    case justWorks
    /// Numeric comparison: both sides `RequestConfirmation(passkey)`.
    case numericComparison
    /// Passkey entry: the side that `inputs` types the passkey the other displays.
    case passkeyEntry(initiatorInputs: Bool, responderInputs: Bool)

    init(initiator i: SimulatedIOCapability, responder r: SimulatedIOCapability) {
        switch (i, r) {
        case (.noInputNoOutput, _), (_, .noInputNoOutput): self = .justWorks
        case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo), (.displayYesNo, .displayOnly): self = .justWorks
        case (.displayYesNo, .displayYesNo), (.displayYesNo, .keyboardDisplay), (.keyboardDisplay, .displayYesNo),
             (.keyboardDisplay, .keyboardDisplay):
            self = .numericComparison
        case (.keyboardOnly, .keyboardOnly): self = .passkeyEntry(initiatorInputs: true, responderInputs: true)
        case (.keyboardOnly, _), (.keyboardDisplay, .displayOnly): self = .passkeyEntry(initiatorInputs: true, responderInputs: false)
        case (_, .keyboardOnly), (_, .keyboardDisplay): self = .passkeyEntry(initiatorInputs: false, responderInputs: true)
        case (.keyboardDisplay, _): self = .passkeyEntry(initiatorInputs: true, responderInputs: false)
        }
    }
}

// MARK: - SimulatedPairing

/// What a simulated peripheral does when a central pairs with it.
public struct SimulatedPairing: Sendable, Equatable {
    /// How the peripheral answers SMP.
    public enum Behavior: Sendable, Equatable {
        /// Pairs (and, when it has a keyboard, types the passkey its user reads).
        case accept
        /// Refuses (SMP Pairing Failed): `Pair` fails with `AuthenticationFailed`.
        case reject
        /// Never answers: `Pair` fails with `AuthenticationTimeout` after the SMP timeout.
        case neverAnswer
    }
    /// The peripheral's IO capability.
    public var capability: SimulatedIOCapability = .noInputNoOutput
    /// How it answers.
    public var behavior: Behavior = .accept
    /// The passkey it shows (passkey entry with a display) or types (keyboard); nil: the one
    /// the simulated SMP draws.
    public var passkey: UInt32?
    /// Whether bluetoothd pairs by itself when the peripheral refuses an unpaired central's
    /// access to an encrypted attribute (true: BlueZ's `change_security` raises the link's
    /// security, the default agent answering). False models a refusal bluetoothd cannot answer
    /// that way (its ATT socket's security is not automatic, or raising it fails at once): the
    /// access fails with `NotPermitted` "Not paired", BlueZ 5.66's answer for ATT 0x05/0x0F,
    /// and only an explicit `Device1.Pair` lets the central in.
    public var bluetoothdPairsItself = true

    /// A peripheral that pairs with `capability`.
    public init(capability: SimulatedIOCapability = .noInputNoOutput, behavior: Behavior = .accept, passkey: UInt32? = nil,
                bluetoothdPairsItself: Bool = true) {
        self.capability = capability
        self.behavior = behavior
        self.passkey = passkey
        self.bluetoothdPairsItself = bluetoothdPairsItself
    }
}

// MARK: - Agent calls

/// A call the simulated bluetoothd makes on a registered `org.bluez.Agent1`.
public enum SimulatedAgentCall: Sendable, Equatable {
    /// `RequestPasskey(device)`: the agent answers the passkey.
    case requestPasskey(device: String)
    /// `DisplayPasskey(device, passkey, entered)`: the agent shows it.
    case displayPasskey(device: String, passkey: UInt32, entered: UInt16)
    /// `RequestConfirmation(device, passkey)`: numeric comparison.
    case requestConfirmation(device: String, passkey: UInt32)
    /// `RequestAuthorization(device)`: Just Works on the responder's side.
    case requestAuthorization(device: String)

    /// The `Agent1` method.
    public var member: String {
        switch self {
        case .requestPasskey: "RequestPasskey"
        case .displayPasskey: "DisplayPasskey"
        case .requestConfirmation: "RequestConfirmation"
        case .requestAuthorization: "RequestAuthorization"
        }
    }
}

/// An agent's answer.
public enum SimulatedAgentAnswer: Sendable, Equatable {
    /// A method return (with the passkey for `RequestPasskey`).
    case accepted(passkey: UInt32?)
    /// An error reply (`org.bluez.Error.Rejected`, `…Canceled`, …).
    case refused(String)
    /// No reply before the deadline.
    case noReply
}

/// How the simulator reaches registered agents on the bus (the D-Bus face implements it).
public protocol AgentBridge: AnyObject, Sendable {
    /// Calls `call` on the agent at `path` of `owner`; `done` gets the answer (on any thread).
    func callAgent(owner: String, path: String, _ call: SimulatedAgentCall, timeout: Duration,
                   _ done: @escaping @Sendable (SimulatedAgentAnswer) -> Void)
    /// Calls `org.bluez.Agent1.Cancel()` (reply ignored).
    func cancelAgent(owner: String, path: String)
}

// MARK: - PairingRegistry

/// The registered agents and the pairings in progress (confined to the simulator's executor).
struct PairingRegistry {
    struct Agent: Equatable {
        let owner: String
        let path: String
        let capability: SimulatedIOCapability
    }
    /// Agents by owner (one per connection, as bluetoothd allows).
    var agents: [String: Agent] = [:]
    /// The owner of the default agent.
    var defaultOwner: String?
    /// Pairings in progress by device path.
    var attempts: [String: PairingAttempt] = [:]
    /// The next passkey the simulated SMP draws (deterministic).
    var passkeySeed: UInt32 = 0

    var defaultAgent: Agent? { defaultOwner.flatMap { agents[$0] } }

    mutating func drawPasskey() -> UInt32 {
        passkeySeed = (passkeySeed &* 1_103_515_245 &+ 12345) & 0x7fff_ffff
        return passkeySeed % 1_000_000
    }
}

/// One pairing in progress. `@unchecked Sendable`: like `DeviceState`, touched only on the
/// simulator's executor (its scheduled closures run there too).
final class PairingAttempt: @unchecked Sendable {
    let device: String
    var finish: ((Result<Void, BlueZErrorReply>) -> Void)?
    /// Agents with a call outstanding (Cancel goes to them when the attempt ends early).
    var waitingOn: [PairingRegistry.Agent] = []
    var timeout: ClockTask?
    /// Pair was called on a connected device: its success is never answered if it comes while
    /// the connection's service discovery runs (`ServicesResolved` false), as with bluetoothd.
    var answerLostWhileResolving = false

    init(device: String, finish: @escaping (Result<Void, BlueZErrorReply>) -> Void) {
        self.device = device
        self.finish = finish
    }
}
