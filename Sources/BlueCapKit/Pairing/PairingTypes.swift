// The values pairing speaks in: IO capability, the device asking, a request, a device's bond state.
import BlueZ
import DBus

// MARK: - PairingIOCapability

/// What a ``PairingAgent`` can show and enter; with the remote side's, it decides the pairing
/// method (Core spec Vol 3 Part H 2.3.5.1): Just Works when either side is `noInputNoOutput`,
/// numeric comparison for `displayYesNo`/`keyboardDisplay` on both sides (LE Secure
/// Connections), passkey entry when one side has a keyboard and the other a display.
public enum PairingIOCapability: String, Sendable, CaseIterable {
    /// `NoInputNoOutput`: Just Works (encrypted, no protection against a man in the middle).
    case noInputNoOutput = "NoInputNoOutput"
    /// `DisplayOnly`: shows a passkey.
    case displayOnly = "DisplayOnly"
    /// `DisplayYesNo`: shows a passkey and answers yes/no.
    case displayYesNo = "DisplayYesNo"
    /// `KeyboardOnly`: enters a passkey.
    case keyboardOnly = "KeyboardOnly"
    /// `KeyboardDisplay`: both.
    case keyboardDisplay = "KeyboardDisplay"

    var agentCapability: AgentCapability { AgentCapability(rawValue: rawValue)! }
}

// MARK: - PairingDevice

/// The remote device a pairing request is about: its `org.bluez.Device1` object.
public struct PairingDevice: Sendable, Hashable, CustomStringConvertible {
    /// The `Device1` path (`/org/bluez/hci1/dev_00_AA_01_00_00_00`); the adapter it is under
    /// says which local side is pairing.
    public let identifier: String

    /// A device known by its path.
    public init(identifier: String) { self.identifier = identifier }

    /// The address in the path (`00:AA:01:00:00:00`): the one BlueZ first found the device at.
    /// For a peer that uses privacy and has bonded before, that is a private address, not the
    /// identity that ``Peripheral/address`` states.
    public var address: String { CentralIdentity(devicePath: identifier).address ?? identifier }

    /// The local adapter's name (`hci1`).
    public var adapter: String? {
        let parts = identifier.split(separator: "/")
        return parts.count >= 3 ? String(parts[2]) : nil
    }

    /// The address.
    public var description: String { address }
}

// MARK: - PairingRequest

/// A request bluetoothd made of a ``PairingAgent`` (`org.bluez.Agent1`), as reported by
/// ``PairingAgent/whenRequested()``.
public struct PairingRequest: Sendable, Equatable, CustomStringConvertible {
    /// What was asked.
    public enum Kind: Sendable, Equatable {
        /// `RequestPinCode` (legacy BR/EDR).
        case pinCode
        /// `DisplayPinCode`.
        case displayPinCode(String)
        /// `RequestPasskey`: the passkey the remote side shows.
        case passkey
        /// `DisplayPasskey`: show this passkey (`entered` keys typed so far on the remote side).
        case displayPasskey(UInt32, entered: UInt16)
        /// `RequestConfirmation`: does the remote side show this passkey?
        case confirmation(passkey: UInt32)
        /// `RequestAuthorization`: may the device pair (Just Works; incoming pairing)?
        case authorization
        /// `AuthorizeService`: may the device use the service with this UUID?
        case service(uuid: String)
    }

    /// What was asked.
    public let kind: Kind
    /// Of which device.
    public let device: PairingDevice

    /// A request.
    public init(kind: Kind, device: PairingDevice) {
        self.kind = kind
        self.device = device
    }

    init(_ request: AgentRequest) {
        let device = PairingDevice(identifier: request.device.rawValue)
        switch request {
        case .requestPinCode: self.init(kind: .pinCode, device: device)
        case .displayPinCode(_, let pin): self.init(kind: .displayPinCode(pin), device: device)
        case .requestPasskey: self.init(kind: .passkey, device: device)
        case .displayPasskey(_, let key, let entered): self.init(kind: .displayPasskey(key, entered: entered), device: device)
        case .requestConfirmation(_, let key): self.init(kind: .confirmation(passkey: key), device: device)
        case .requestAuthorization: self.init(kind: .authorization, device: device)
        case .authorizeService(_, let uuid): self.init(kind: .service(uuid: uuid), device: device)
        }
    }

    /// What was asked, of which device.
    public var description: String { "\(kind) from \(device)" }
}

// MARK: - PairingState

/// A device's bond state (`org.bluez.Device1` `Paired`, `Bonded`, `Trusted`, `Blocked`).
public struct PairingState: Sendable, Hashable, CustomStringConvertible {
    /// `Paired`: the link was paired (keys exchanged), in this or an earlier connection.
    public var isPaired: Bool
    /// `Bonded`: the keys are stored; the next connection encrypts without pairing again.
    public var isBonded: Bool
    /// `Trusted`: the device's requests need no authorization from the agent.
    public var isTrusted: Bool
    /// `Blocked`: connections from and to the device are refused.
    public var isBlocked: Bool

    /// A state.
    public init(isPaired: Bool = false, isBonded: Bool = false, isTrusted: Bool = false, isBlocked: Bool = false) {
        self.isPaired = isPaired
        self.isBonded = isBonded
        self.isTrusted = isTrusted
        self.isBlocked = isBlocked
    }

    init(_ p: Device1.Properties) {
        self.init(isPaired: p.paired ?? false, isBonded: p.bonded ?? false, isTrusted: p.trusted ?? false,
                  isBlocked: p.blocked ?? false)
    }

    /// The `Device1` properties it is read from.
    static let propertyNames: Set<String> = ["Paired", "Bonded", "Trusted", "Blocked"]

    /// The four flags.
    public var description: String {
        "paired \(isPaired), bonded \(isBonded), trusted \(isTrusted), blocked \(isBlocked)"
    }
}
