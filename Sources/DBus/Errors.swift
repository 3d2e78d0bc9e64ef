// Errors the DBus module reports.

/// An error reply from the bus or a remote peer: the D-Bus error name and its message.
public struct DBusRemoteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.freedesktop.DBus.Error.UnknownMethod`.
    public var name: String
    /// The human-readable message (the error reply's first string argument).
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    // MARK: Standard names
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let timedOut = "org.freedesktop.DBus.Error.Timeout"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
}

/// Why a method call failed.
public enum DBusCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The callee answered with an error reply.
    case remote(DBusRemoteError)
    /// No reply arrived within the call's timeout (libdbus `NoReply`).
    case timeout(after: Duration)
    /// The connection is closed or was lost before the reply arrived.
    case disconnected
    /// The call could not be built: a value does not match its declared type, a name is invalid.
    case invalidMessage(String)
    /// A blocking call was made on the connection's owner thread, where it could never complete.
    case blockingOnOwnerThread

    public var description: String {
        switch self {
        case .remote(let e): "D-Bus error \(e)"
        case .timeout(let d): "no reply within \(d)"
        case .disconnected: "the D-Bus connection is closed"
        case .invalidMessage(let m): "invalid message: \(m)"
        case .blockingOnOwnerThread: "blocking call on the connection's own thread would deadlock"
        }
    }

    /// The D-Bus error name when the callee replied with an error.
    public var remoteName: String? {
        if case .remote(let e) = self { return e.name }
        return nil
    }
}

/// A value did not have the type the reader asked for, or an argument was missing.
public struct DBusDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "D-Bus decoding error: \(message)" }
}

/// The connection could not be opened.
public struct DBusConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bus address that was tried.
    public var address: String
    /// What went wrong, including libdbus's message.
    public var message: String
    public var description: String { message }
}
