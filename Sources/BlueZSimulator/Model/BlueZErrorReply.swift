// BlueZErrorReply: the D-Bus error replies bluetoothd sends, with its exact names and messages.

// MARK: - BlueZErrorReply

/// A D-Bus error reply: name (`org.bluez.Error.*` or any other) and message.
/// The static members reproduce bluetoothd's `btd_error_*` helpers word for word.
public struct BlueZErrorReply: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.bluez.Error.Failed`.
    public var name: String
    /// The error message.
    public var message: String

    /// An error reply with any name.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `org.bluez.Error.<short>` with `message`.
    public static func bluez(_ short: String, _ message: String) -> BlueZErrorReply {
        BlueZErrorReply(name: "org.bluez.Error." + short, message: message)
    }

    public var description: String { "\(name): \(message)" }

    // MARK: bluetoothd's replies

    /// `org.bluez.Error.Failed` with a free message (btd_error_failed).
    public static func failed(_ message: String) -> Self { .bluez("Failed", message) }
    /// `org.bluez.Error.InvalidArguments` "Invalid arguments in method call".
    public static let invalidArguments = bluez("InvalidArguments", "Invalid arguments in method call")
    /// `org.bluez.Error.InvalidArguments` with a message (btd_error_invalid_args_str).
    public static func invalidArguments(_ message: String) -> Self { .bluez("InvalidArguments", message) }
    /// `org.bluez.Error.InProgress` "Operation already in progress" (btd_error_busy).
    public static let busy = bluez("InProgress", "Operation already in progress")
    /// `org.bluez.Error.InProgress` "In Progress".
    public static let inProgress = bluez("InProgress", "In Progress")
    /// `org.bluez.Error.AlreadyExists` "Already Exists".
    public static let alreadyExists = bluez("AlreadyExists", "Already Exists")
    /// `org.bluez.Error.NotSupported` "Operation is not supported".
    public static let notSupported = bluez("NotSupported", "Operation is not supported")
    /// `org.bluez.Error.NotConnected` "Not Connected".
    public static let notConnected = bluez("NotConnected", "Not Connected")
    /// `org.bluez.Error.AlreadyConnected` "Already Connected".
    public static let alreadyConnected = bluez("AlreadyConnected", "Already Connected")
    /// `org.bluez.Error.DoesNotExist` "Does Not Exist".
    public static let doesNotExist = bluez("DoesNotExist", "Does Not Exist")
    /// `org.bluez.Error.NotAuthorized` "Operation Not Authorized".
    public static let notAuthorized = bluez("NotAuthorized", "Operation Not Authorized")
    /// `org.bluez.Error.NotPermitted` with a message.
    public static func notPermitted(_ message: String) -> Self { .bluez("NotPermitted", message) }
    /// `org.bluez.Error.NotReady` "Resource Not Ready".
    public static let notReady = bluez("NotReady", "Resource Not Ready")
    /// `org.bluez.Error.NotAvailable` "Operation currently not available".
    public static let notAvailable = bluez("NotAvailable", "Operation currently not available")
    /// `org.freedesktop.DBus.Error.UnknownMethod` for a member the simulator does not implement.
    public static func unknownMethod(_ interface: String, _ member: String) -> Self {
        BlueZErrorReply(name: "org.freedesktop.DBus.Error.UnknownMethod",
                        message: "Method \"\(member)\" with this signature doesn't exist on interface \"\(interface)\"")
    }
    /// `org.freedesktop.DBus.Error.NoReply`, what a caller sees when a call is never answered.
    public static let noReply = BlueZErrorReply(
        name: "org.freedesktop.DBus.Error.NoReply", message: "Did not receive a reply")
}
