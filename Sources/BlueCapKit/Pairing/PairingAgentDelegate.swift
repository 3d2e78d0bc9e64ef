// PairingAgentDelegate: how the application answers bluetoothd's pairing requests.
import Futures

/// Answers the requests a ``PairingAgent`` receives. Each method runs on the agent's execution
/// context and returns at once; the answer may come later through the future (bluetoothd waits,
/// up to its own timeout). A future answering `false` rejects (`org.bluez.Error.Rejected`: the
/// pairing fails with `AuthenticationRejected`); a failed future cancels (`org.bluez.Error.Canceled`).
///
/// Every method has a default: requests are rejected, displays ignored. Implement what the
/// agent's ``PairingIOCapability`` makes bluetoothd ask, or use ``PairingHandlers``.
public protocol PairingAgentDelegate: Sendable {
    /// `Agent1.RequestPinCode` (legacy BR/EDR): the PIN code, 1-16 characters.
    func pinCode(for device: PairingDevice) -> Future<String>
    /// `Agent1.DisplayPinCode`: show `pinCode` to the user.
    func display(pinCode: String, for device: PairingDevice)
    /// `Agent1.RequestPasskey`: the passkey (0-999999) the remote side displays.
    func passkey(for device: PairingDevice) -> Future<UInt32>
    /// `Agent1.DisplayPasskey`: show `passkey` (6 digits, zero-padded) for the remote side to type.
    func display(passkey: UInt32, entered: UInt16, for device: PairingDevice)
    /// `Agent1.RequestConfirmation`: true when the remote side shows the same `passkey`.
    func confirm(passkey: UInt32, for device: PairingDevice) -> Future<Bool>
    /// `Agent1.RequestAuthorization`: true to let `device` pair (Just Works, incoming).
    func authorize(_ device: PairingDevice) -> Future<Bool>
    /// `Agent1.AuthorizeService`: true to let `device` use the service `uuid`.
    func authorize(service uuid: String, for device: PairingDevice) -> Future<Bool>
    /// `Agent1.Cancel`: bluetoothd gave up the request in progress (its timeout, or the pairing ended).
    func pairingCanceled()
}

extension PairingAgentDelegate {
    /// Declines (`Canceled`).
    public func pinCode(for device: PairingDevice) -> Future<String> { Future(error: PairingAgentDeclined()) }
    /// Shows nothing.
    public func display(pinCode: String, for device: PairingDevice) {}
    /// Declines (`Canceled`).
    public func passkey(for device: PairingDevice) -> Future<UInt32> { Future(error: PairingAgentDeclined()) }
    /// Shows nothing.
    public func display(passkey: UInt32, entered: UInt16, for device: PairingDevice) {}
    /// Rejects.
    public func confirm(passkey: UInt32, for device: PairingDevice) -> Future<Bool> { Future(value: false) }
    /// Rejects.
    public func authorize(_ device: PairingDevice) -> Future<Bool> { Future(value: false) }
    /// Rejects.
    public func authorize(service uuid: String, for device: PairingDevice) -> Future<Bool> { Future(value: false) }
    /// Does nothing.
    public func pairingCanceled() {}
}

/// The failure of a default answer: the delegate does not handle the request.
public struct PairingAgentDeclined: Error, Sendable, CustomStringConvertible {
    /// An error.
    public init() {}
    /// What happened.
    public var description: String { "the pairing agent's delegate does not answer this request" }
}

/// A ``PairingAgentDelegate`` made of closures; a nil closure keeps the default answer.
/// ``autoAccept(passkey:pinCode:)`` accepts everything (what `bluetoothctl`'s "NoInputNoOutput"
/// agent does; for tests, kiosks, and `--auto-confirm`).
public struct PairingHandlers: PairingAgentDelegate {
    /// Answers `RequestPinCode`.
    public var pinCode: (@Sendable (PairingDevice) -> Future<String>)?
    /// Answers `RequestPasskey`.
    public var passkey: (@Sendable (PairingDevice) -> Future<UInt32>)?
    /// Shows `DisplayPasskey`'s passkey.
    public var displayPasskey: (@Sendable (UInt32, PairingDevice) -> Void)?
    /// Answers `RequestConfirmation`.
    public var confirm: (@Sendable (UInt32, PairingDevice) -> Future<Bool>)?
    /// Answers `RequestAuthorization`.
    public var authorize: (@Sendable (PairingDevice) -> Future<Bool>)?
    /// Answers `AuthorizeService`.
    public var authorizeService: (@Sendable (String, PairingDevice) -> Future<Bool>)?
    /// Told of `Cancel`.
    public var canceled: (@Sendable () -> Void)?

    /// Handlers; nil ones keep the default answer (reject).
    public init(pinCode: (@Sendable (PairingDevice) -> Future<String>)? = nil,
                passkey: (@Sendable (PairingDevice) -> Future<UInt32>)? = nil,
                displayPasskey: (@Sendable (UInt32, PairingDevice) -> Void)? = nil,
                confirm: (@Sendable (UInt32, PairingDevice) -> Future<Bool>)? = nil,
                authorize: (@Sendable (PairingDevice) -> Future<Bool>)? = nil,
                authorizeService: (@Sendable (String, PairingDevice) -> Future<Bool>)? = nil,
                canceled: (@Sendable () -> Void)? = nil) {
        self.pinCode = pinCode
        self.passkey = passkey
        self.displayPasskey = displayPasskey
        self.confirm = confirm
        self.authorize = authorize
        self.authorizeService = authorizeService
        self.canceled = canceled
    }

    /// Accepts every confirmation and authorization, answers `passkey` / `pinCode` when asked
    /// (rejects when nil).
    public static func autoAccept(passkey: UInt32? = nil, pinCode: String? = nil) -> PairingHandlers {
        var pinHandler: (@Sendable (PairingDevice) -> Future<String>)?
        if let pinCode { pinHandler = { _ in Future(value: pinCode) } }
        var passkeyHandler: (@Sendable (PairingDevice) -> Future<UInt32>)?
        if let passkey { passkeyHandler = { _ in Future(value: passkey) } }
        return PairingHandlers(
            pinCode: pinHandler,
            passkey: passkeyHandler,
            confirm: { _, _ in Future(value: true) },
            authorize: { _ in Future(value: true) },
            authorizeService: { _, _ in Future(value: true) })
    }

    /// ``pinCode``'s answer, else declines.
    public func pinCode(for device: PairingDevice) -> Future<String> {
        pinCode?(device) ?? Future(error: PairingAgentDeclined())
    }
    /// ``passkey``'s answer, else declines.
    public func passkey(for device: PairingDevice) -> Future<UInt32> {
        passkey?(device) ?? Future(error: PairingAgentDeclined())
    }
    /// Passes the passkey to ``displayPasskey``.
    public func display(passkey: UInt32, entered: UInt16, for device: PairingDevice) { displayPasskey?(passkey, device) }
    /// ``confirm``'s answer, else rejects.
    public func confirm(passkey: UInt32, for device: PairingDevice) -> Future<Bool> {
        confirm?(passkey, device) ?? Future(value: false)
    }
    /// ``authorize``'s answer, else rejects.
    public func authorize(_ device: PairingDevice) -> Future<Bool> { authorize?(device) ?? Future(value: false) }
    /// ``authorizeService``'s answer, else rejects.
    public func authorize(service uuid: String, for device: PairingDevice) -> Future<Bool> {
        authorizeService?(uuid, device) ?? Future(value: false)
    }
    /// Tells ``canceled``.
    public func pairingCanceled() { canceled?() }
}
