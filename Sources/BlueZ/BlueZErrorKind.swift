// BlueZErrorKind: the open set of error kinds shared by every layer (BlueZ, BlueCapKit).

// MARK: - BlueZErrorKind

/// What went wrong, as an open set of named kinds (in the manner of swift-system's `Errno`).
///
/// A kind is its D-Bus error name (``rawValue``): `org.bluez.Error.InProgress` is
/// ``inProgress``; a name no static member covers is still a kind (``other(_:)``), so a new
/// BlueZ error never breaks a `switch`. Match kinds as if they were enum cases and keep a
/// `default:` branch:
///
/// ```swift
/// switch error.kind {
/// case .inProgress, .notReady: retryLater()
/// case .authenticationFailed: askForPasskeyAgain()
/// default: report(error)
/// }
/// ```
///
/// Other modules add kinds in extensions (`static let adapterRemoved = Self(rawValue: "…")`).
/// Kinds of our own use the `org.bluecap.Error.` prefix.
public struct BlueZErrorKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.bluez.Error.InProgress`.
    public let rawValue: String

    /// The kind named `rawValue` (a D-Bus error name).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Any other error name, kept in full: `.other("org.bluez.Error.Whatever")`. Equal to the
    /// named member when there is one (`.other("org.bluez.Error.InProgress") == .inProgress`).
    public static func other(_ name: String) -> Self { Self(rawValue: name) }

    /// The name without its `org.bluez.Error.` / `org.bluecap.Error.` prefix (`InProgress`),
    /// else the full name.
    public var description: String {
        for prefix in ["org.bluez.Error.", "org.bluecap.Error."] where rawValue.hasPrefix(prefix) {
            return String(rawValue.dropFirst(prefix.count))
        }
        return rawValue
    }

    /// The short name after `org.bluez.Error.`, when the kind is a BlueZ error.
    public var bluezName: String? {
        rawValue.hasPrefix("org.bluez.Error.") ? String(rawValue.dropFirst("org.bluez.Error.".count)) : nil
    }

    private static func bluez(_ short: String) -> Self { Self(rawValue: "org.bluez.Error." + short) }
    private static func ours(_ short: String) -> Self { Self(rawValue: "org.bluecap.Error." + short) }

    // MARK: org.bluez.Error.*

    /// `org.bluez.Error.InvalidArguments`
    public static let invalidArguments = bluez("InvalidArguments")
    /// `org.bluez.Error.InProgress`
    public static let inProgress = bluez("InProgress")
    /// `org.bluez.Error.AlreadyExists`
    public static let alreadyExists = bluez("AlreadyExists")
    /// `org.bluez.Error.AlreadyConnected`
    public static let alreadyConnected = bluez("AlreadyConnected")
    /// `org.bluez.Error.NotSupported`: also a characteristic that does not support the operation.
    public static let notSupported = bluez("NotSupported")
    /// `org.bluez.Error.NotConnected`: also a peripheral that is not connected.
    public static let notConnected = bluez("NotConnected")
    /// `org.bluez.Error.NotReady`
    public static let notReady = bluez("NotReady")
    /// `org.bluez.Error.NotAvailable`
    public static let notAvailable = bluez("NotAvailable")
    /// `org.bluez.Error.NotAuthorized`
    public static let notAuthorized = bluez("NotAuthorized")
    /// `org.bluez.Error.NotPermitted`
    public static let notPermitted = bluez("NotPermitted")
    /// `org.bluez.Error.NotFound`: also services, characteristics or descriptors that do not exist.
    public static let notFound = bluez("NotFound")
    /// `org.bluez.Error.DoesNotExist`
    public static let doesNotExist = bluez("DoesNotExist")
    /// `org.bluez.Error.InvalidValueLength`
    public static let invalidValueLength = bluez("InvalidValueLength")
    /// `org.bluez.Error.InvalidOffset`
    public static let invalidOffset = bluez("InvalidOffset")
    /// `org.bluez.Error.AuthenticationFailed` (pairing: wrong passkey or PIN).
    public static let authenticationFailed = bluez("AuthenticationFailed")
    /// `org.bluez.Error.AuthenticationCanceled` (pairing canceled by a side or the agent).
    public static let authenticationCanceled = bluez("AuthenticationCanceled")
    /// `org.bluez.Error.AuthenticationRejected` (pairing rejected by the agent or the device).
    public static let authenticationRejected = bluez("AuthenticationRejected")
    /// `org.bluez.Error.AuthenticationTimeout` (the agent or the device did not answer in time).
    public static let authenticationTimeout = bluez("AuthenticationTimeout")
    /// `org.bluez.Error.ConnectionAttemptFailed`
    public static let connectionAttemptFailed = bluez("ConnectionAttemptFailed")
    /// `org.bluez.Error.Rejected`
    public static let rejected = bluez("Rejected")
    /// `org.bluez.Error.Canceled`
    public static let canceled = bluez("Canceled")
    /// `org.bluez.Error.Failed` (the message says why, e.g. `le-connection-abort-by-local`).
    public static let failed = bluez("Failed")

    // MARK: The way to BlueZ

    /// The call's deadline passed with no reply.
    public static let timeout = ours("Timeout")
    /// Our D-Bus connection is closed (closed by us, or lost): the call was never sent, or its
    /// reply can no longer arrive (`org.freedesktop.DBus.Error.Disconnected`). For a peripheral,
    /// also: the link dropped while the operation was pending.
    public static let disconnected = ours("Disconnected")
    /// No `org.bluez` on the bus (bluetoothd not running, or restarting), or bluetoothd left
    /// the bus while the call was pending (the bus daemon's `NoReply` "Message recipient
    /// disconnected from message bus without replying").
    public static let serviceUnavailable = ours("ServiceUnavailable")
    /// The object the call addressed does not exist (`org.freedesktop.DBus.Error.UnknownObject`),
    /// e.g. a stale GATT object after the device's services changed.
    public static let unknownObject = Self(rawValue: "org.freedesktop.DBus.Error.UnknownObject")
    /// Access refused by the bus policy (`org.freedesktop.DBus.Error.AccessDenied`).
    public static let accessDenied = Self(rawValue: "org.freedesktop.DBus.Error.AccessDenied")
    /// A reply or property whose type is not what BlueZ documents.
    public static let invalidReply = ours("InvalidReply")
}
