// MQTTMessage: one message to publish (or the last will).

import Foundation

/// A message for the broker: topic, payload, QoS (0 or 1 here) and whether the broker keeps it
/// as the topic's retained value.
package struct MQTTMessage: Sendable, Equatable {
    package var topic: String
    package var payload: Data
    package var qos: Int
    package var retain: Bool

    package init(topic: String, payload: Data, qos: Int = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    package init(topic: String, text: String, qos: Int = 1, retain: Bool = false) {
        self.init(topic: topic, payload: Data(text.utf8), qos: qos, retain: retain)
    }
}
