// ScenarioMessage: one recorded D-Bus method call or signal.
import DBus

// MARK: - ScenarioMessage

/// A method call or signal of a recording: the object path, interface, member and arguments.
/// Calls of the app are matched on all four when replayed.
public struct ScenarioMessage: Sendable, Equatable, CustomStringConvertible {
    /// The object path (`/org/bluez/hci0/dev_…`).
    public var path: String
    /// The interface (`org.bluez.Device1`).
    public var interface: String
    /// The member (`Connect`).
    public var member: String
    /// The arguments, in order.
    package var arguments: [DBusValue]

    /// A message at `path`, `interface.member(arguments)`.
    package init(path: String, interface: String, member: String, arguments: [DBusValue] = []) {
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// `/path interface.member(arguments)`.
    public var description: String {
        "\(path) \(interface).\(member)(\(arguments.map { "\($0)" }.joined(separator: ", ")))"
    }
}
