// GatewaySink: what a device follower and the advertisement reporter hand to the gateway.

import ExampleSupport
import Foundation

/// Where readings, device states and progress go (the ``Gateway``).
package protocol GatewaySink: Sendable {
    /// A value of a configured characteristic (read, notified or read back after a write).
    func reading(_ address: String, _ characteristic: CharacteristicConfig, _ value: Data)
    /// The device's link went up or down.
    func deviceState(_ address: String, connected: Bool)
    /// Progress: a line on stderr, a JSON line with `--json`.
    func event(_ name: String, _ address: String?, _ fields: [(String, JSON)], text: @autoclosure () -> String)
}
