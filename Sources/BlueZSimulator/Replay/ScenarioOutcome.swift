// ScenarioOutcome: how a recorded method call was answered.
import DBus

// MARK: - ScenarioOutcome

/// The answer to a recorded call: a method return with its values, an error, or none (the
/// recording ended, or the caller asked for no reply).
package enum ScenarioOutcome: Sendable, Equatable, CustomStringConvertible {
    /// A method return carrying `values`.
    case reply([DBusValue])
    /// An error reply `name` (`org.bluez.Error.Failed`) with its message.
    case error(name: String, message: String)
    /// No answer was recorded.
    case none

    /// "reply(…)", "error org.bluez.Error.Failed: …" or "no reply".
    package var description: String {
        switch self {
        case .reply(let values): "reply(\(values.map { "\($0)" }.joined(separator: ", ")))"
        case .error(let name, let message): "error \(name): \(message)"
        case .none: "no reply"
        }
    }
}
