// MQTTWatcher: the tests' subscriber — the gateway example's own MQTT client, collecting what
// the broker delivers, with waits that end on a message or a deadline (no polling).

import Foundation
import GatewayCore
import TestSupport

/// Subscribes to `filters` on `broker` and keeps every message; ``wait(_:timeout:_:)`` returns
/// the first one matching.
final class MQTTWatcher: Sendable {
    struct Message: Sendable {
        let topic: String
        let text: String
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] }
        /// The `"error"` of a `…/set/result`, or "".
        var error: String { (json?["error"] as? String) ?? "" }
    }

    let messages = Collector<Message>()
    let connections = Collector<Int>()
    let client: MQTTClient

    init(_ broker: BrokerAddress, filters: [String]) throws {
        let messages = self.messages
        let connections = self.connections
        var handlers = MQTTClient.Handlers()
        handlers.message = { topic, payload in messages.append(Message(topic: topic, text: String(decoding: payload, as: UTF8.self))) }
        handlers.connected = { n in connections.append(n) }
        client = try MQTTClient(clientID: "watcher-\(UInt32.random(in: 0...UInt32.max))", broker: broker, will: nil,
                                queueCapacity: 100, handlers: handlers)
        for f in filters { client.subscribe(f) }
        try client.start()
    }

    /// Waits for the subscriber's `n`th connection (1: the first).
    func connected(_ n: Int = 1, timeout: Duration = .seconds(15)) async throws {
        _ = try await connections.wait(for: n, timeout: timeout)
    }

    /// Publishes `text` on `topic` (QoS 1).
    func publish(_ topic: String, _ text: String) {
        client.publish(MQTTMessage(topic: topic, text: text, qos: 1))
    }

    /// The first message, from `index` on, on `topic` for which `match` holds.
    @discardableResult
    func wait(_ topic: String, from index: Int = 0, timeout: Duration = .seconds(20),
              _ match: @escaping (Message) -> Bool = { _ in true }) async throws -> Message {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let items = messages.items
            if let m = items.dropFirst(index).first(where: { $0.topic == topic && match($0) }) { return m }
            guard clock.now < deadline else {
                throw ProcessTestError("no message on \(topic) within \(timeout); received:\n"
                                       + items.suffix(30).map { "\($0.topic) \($0.text.prefix(200))" }.joined(separator: "\n"))
            }
            _ = try? await messages.wait(for: items.count + 1, timeout: deadline - clock.now)
        }
    }

    func close() { client.close() }
}
