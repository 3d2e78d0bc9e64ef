import DBus

/// An error from BlueZ or from the way to it, as `{kind, message}`.
///
/// Every `org.bluez.Error.*` name BlueZ documents has a ``Kind``; names we do not know keep
/// their full D-Bus name in ``Kind/other(_:)``. Transport failures are kinds too: a call that
/// hit its deadline is ``Kind/timeout``, our own connection closed ``Kind/disconnected``, no
/// `org.bluez` on the bus (or bluetoothd leaving it before it answered) ``Kind/serviceUnavailable``.
///
/// The error carries the context a user needs to act: which call (``operation``), on which
/// object (``path``), and for timeouts which deadline fired.
public struct BlueZError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, mirroring `org.bluez.Error.*`.
    public enum Kind: Sendable, Equatable, Hashable {
        /// `org.bluez.Error.InvalidArguments`
        case invalidArguments
        /// `org.bluez.Error.InProgress`
        case inProgress
        /// `org.bluez.Error.AlreadyExists`
        case alreadyExists
        /// `org.bluez.Error.AlreadyConnected`
        case alreadyConnected
        /// `org.bluez.Error.NotSupported`
        case notSupported
        /// `org.bluez.Error.NotConnected`
        case notConnected
        /// `org.bluez.Error.NotReady`
        case notReady
        /// `org.bluez.Error.NotAvailable`
        case notAvailable
        /// `org.bluez.Error.NotAuthorized`
        case notAuthorized
        /// `org.bluez.Error.NotPermitted`
        case notPermitted
        /// `org.bluez.Error.NotFound`
        case notFound
        /// `org.bluez.Error.DoesNotExist`
        case doesNotExist
        /// `org.bluez.Error.InvalidValueLength`
        case invalidValueLength
        /// `org.bluez.Error.InvalidOffset`
        case invalidOffset
        /// `org.bluez.Error.AuthenticationFailed`
        case authenticationFailed
        /// `org.bluez.Error.AuthenticationCanceled`
        case authenticationCanceled
        /// `org.bluez.Error.AuthenticationRejected`
        case authenticationRejected
        /// `org.bluez.Error.AuthenticationTimeout`
        case authenticationTimeout
        /// `org.bluez.Error.ConnectionAttemptFailed`
        case connectionAttemptFailed
        /// `org.bluez.Error.Rejected`
        case rejected
        /// `org.bluez.Error.Canceled`
        case canceled
        /// `org.bluez.Error.Failed` (the message says why, e.g. `le-connection-abort-by-local`).
        case failed
        /// The call's deadline passed with no reply.
        case timeout
        /// Our D-Bus connection is closed (closed by us, or lost): the call was never sent, or its
        /// reply can no longer arrive (`org.freedesktop.DBus.Error.Disconnected`).
        case disconnected
        /// No `org.bluez` on the bus (bluetoothd not running, or restarting), or bluetoothd left
        /// the bus while the call was pending (the bus daemon's `NoReply` "Message recipient
        /// disconnected from message bus without replying").
        case serviceUnavailable
        /// The object the call addressed does not exist (`org.freedesktop.DBus.Error.UnknownObject`),
        /// e.g. a stale GATT object after the device's services changed.
        case unknownObject
        /// Access refused by the bus policy (`org.freedesktop.DBus.Error.AccessDenied`).
        case accessDenied
        /// A reply or property whose type is not what BlueZ documents.
        case invalidReply
        /// Any other error name, kept in full.
        case other(String)
    }

    /// What went wrong.
    public var kind: Kind
    /// BlueZ's message, or ours for transport errors.
    public var message: String
    /// The call that failed, e.g. `org.bluez.Device1.Connect`, when known.
    public var operation: String?
    /// The object the call addressed, when known.
    public var path: String?

    /// Creates an error.
    public init(kind: Kind, message: String, operation: String? = nil, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.operation = operation
        self.path = path
    }

    // MARK: - Mapping

    private static let bluezNames: [String: Kind] = [
        "InvalidArguments": .invalidArguments, "InProgress": .inProgress,
        "AlreadyExists": .alreadyExists, "AlreadyConnected": .alreadyConnected,
        "NotSupported": .notSupported, "NotConnected": .notConnected, "NotReady": .notReady,
        "NotAvailable": .notAvailable, "NotAuthorized": .notAuthorized,
        "NotPermitted": .notPermitted, "NotFound": .notFound, "DoesNotExist": .doesNotExist,
        "InvalidValueLength": .invalidValueLength, "InvalidOffset": .invalidOffset,
        "AuthenticationFailed": .authenticationFailed,
        "AuthenticationCanceled": .authenticationCanceled,
        "AuthenticationRejected": .authenticationRejected,
        "AuthenticationTimeout": .authenticationTimeout,
        "ConnectionAttemptFailed": .connectionAttemptFailed, "Rejected": .rejected,
        "Canceled": .canceled, "Failed": .failed,
    ]

    /// The kind for a D-Bus error name (`org.bluez.Error.InProgress` → ``Kind/inProgress``).
    public static func kind(forErrorName name: String) -> Kind {
        let prefix = "org.bluez.Error."
        if name.hasPrefix(prefix), let kind = bluezNames[String(name.dropFirst(prefix.count))] {
            return kind
        }
        switch name {
        case DBusRemoteError.noReply, DBusRemoteError.timedOut: return .timeout
        case DBusRemoteError.serviceUnknown, DBusRemoteError.nameHasNoOwner: return .serviceUnavailable
        case DBusRemoteError.disconnected: return .disconnected
        case DBusRemoteError.unknownObject: return .unknownObject
        case DBusRemoteError.accessDenied: return .accessDenied
        default: return .other(name)
        }
    }

    /// The D-Bus error name for this kind, as a GATT server replies it to BlueZ
    /// (``Kind/inProgress`` → `org.bluez.Error.InProgress`).
    public var errorName: String {
        if let short = Self.bluezNames.first(where: { $0.value == kind })?.key {
            return "org.bluez.Error." + short
        }
        switch kind {
        case .timeout: return DBusRemoteError.noReply
        case .disconnected: return DBusRemoteError.disconnected
        case .serviceUnavailable: return DBusRemoteError.serviceUnknown
        case .unknownObject: return DBusRemoteError.unknownObject
        case .accessDenied: return DBusRemoteError.accessDenied
        case .other(let name): return name
        default: return DBusRemoteError.failed
        }
    }

    /// Maps a failed D-Bus call to a BlueZ error, keeping the call and the object.
    public init(_ error: DBusCallError, operation: String? = nil, path: String? = nil) {
        switch error {
        case .remote(let remote) where remote.name == DBusRemoteError.noReply && remote.message.contains("disconnected"):
            // libdbus reports our own deadlines as `.timeout`; a NoReply *reply* comes from the bus
            // daemon, and this one means the callee left the bus before answering: not a timeout.
            self.init(kind: .serviceUnavailable, message: remote.message, operation: operation, path: path)
        case .remote(let remote):
            self.init(kind: Self.kind(forErrorName: remote.name), message: remote.message,
                      operation: operation, path: path)
        case .timeout(let after):
            self.init(kind: .timeout, message: "no reply within \(after)", operation: operation, path: path)
        case .disconnected:
            self.init(kind: .disconnected, message: "the D-Bus connection is closed",
                      operation: operation, path: path)
        default:
            self.init(kind: .invalidReply, message: error.description, operation: operation, path: path)
        }
    }

    /// Whether BlueZ reported a transient condition worth retrying after a pause:
    /// `InProgress`, `Failed` with `le-connection-abort-by-local`, or
    /// `Failed` "Software caused connection abort".
    public var isTransient: Bool {
        switch kind {
        case .inProgress: return true
        case .failed:
            return message.contains("le-connection-abort-by-local")
                || message.contains("Software caused connection abort")
        default: return false
        }
    }

    /// `"<operation> on <path> failed: <kind>: <message>"`.
    public var description: String {
        var text = ""
        if let operation { text += operation }
        if let path { text += (text.isEmpty ? "" : " on ") + path }
        if !text.isEmpty { text += " failed: " }
        let name: String
        if case .other(let full) = kind { name = full } else { name = "\(kind)" }
        return text + name + (message.isEmpty ? "" : ": " + message)
    }
}
