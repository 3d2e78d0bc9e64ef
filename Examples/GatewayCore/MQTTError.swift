// MQTTError: what went wrong talking to the broker, with the cause and what to do.

import Foundation

/// A failure of the MQTT client: its kind and a message naming the cause.
package struct MQTTError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure.
    package enum Kind: String, Sendable {
        /// The broker cannot be reached (refused, no route, lost).
        case unreachable
        /// The broker refused the connection (bad credentials, not authorised).
        case refused
        /// A topic or payload libmosquitto rejects.
        case invalid
        /// libmosquitto itself failed.
        case library
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
