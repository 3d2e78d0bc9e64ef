import DBus

/// An error from BlueZ or from the way to it, as `{kind, message}`.
///
/// Every `org.bluez.Error.*` name BlueZ documents has a ``Kind``; names we do not know keep
/// their full D-Bus name (``Kind/other(_:)``). Transport failures are kinds too: a call that
/// hit its deadline is ``Kind/timeout``, our own connection closed ``Kind/disconnected``, no
/// `org.bluez` on the bus (or bluetoothd leaving it before it answered) ``Kind/serviceUnavailable``.
///
/// The error carries the context a user needs to act: which call (``operation``), on which
/// object (``path``), and for timeouts which deadline fired.
public struct BlueZError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong. An open set (see ``BlueZErrorKind``): match with `case .inProgress:` and
    /// keep a `default:`.
    public typealias Kind = BlueZErrorKind

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

    /// The kind for a D-Bus error name (`org.bluez.Error.InProgress` → ``BlueZErrorKind/inProgress``).
    /// Any `org.bluez.Error.*` name keeps its name, known or not (a name added by a newer BlueZ
    /// is ``BlueZErrorKind/other(_:)`` of it); bus errors map to the transport kinds.
    public static func kind(forErrorName name: String) -> Kind {
        switch name {
        case DBusRemoteError.noReply, DBusRemoteError.timedOut: return .timeout
        case DBusRemoteError.serviceUnknown, DBusRemoteError.nameHasNoOwner: return .serviceUnavailable
        case DBusRemoteError.disconnected: return .disconnected
        default: return Kind(rawValue: name)
        }
    }

    /// The D-Bus error name for this kind, as a GATT server replies it to BlueZ
    /// (``BlueZErrorKind/inProgress`` → `org.bluez.Error.InProgress`).
    public var errorName: String {
        switch kind {
        case .timeout: return DBusRemoteError.noReply
        case .disconnected: return DBusRemoteError.disconnected
        case .serviceUnavailable: return DBusRemoteError.serviceUnknown
        default: return kind.rawValue
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
    /// `InProgress`, `Failed` with `le-connection-abort-by-local`,
    /// `Failed` "Software caused connection abort", or `Failed` "Operation already in progress"
    /// (a `Connect` while the last link's ATT bearer is still being released).
    public var isTransient: Bool {
        switch kind {
        case .inProgress: return true
        case .failed:
            return message.contains("le-connection-abort-by-local")
                || message.contains("Software caused connection abort")
                // device_connect_le's -EALREADY: the last link's ATT bearer is not released yet
                // (a Connect right after that link went down, bluetoothd 5.82)
                || message == "Operation already in progress"
        default: return false
        }
    }

    /// Whether BlueZ says the device's link is gone: `NotConnected`, or `Failed` "Not connected",
    /// what bluetoothd answers every GATT call once its ATT bearer is down (after an ATT
    /// transaction timeout, while `Device1.Connected` may still read true for a while).
    public var saysNotConnected: Bool {
        kind == .notConnected || (kind == .failed && message.lowercased() == "not connected")
    }

    /// `"<operation> on <path> failed: <kind>: <message>"`.
    public var description: String {
        var text = ""
        if let operation { text += operation }
        if let path { text += (text.isEmpty ? "" : " on ") + path }
        if !text.isEmpty { text += " failed: " }
        return text + kind.description + (message.isEmpty ? "" : ": " + message)
    }
}
