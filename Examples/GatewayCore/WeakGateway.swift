// WeakGateway: the gateway as its parts see it, without keeping it alive.

import ExampleSupport
import Foundation

/// Forwards to the ``Gateway`` once it is built (its followers and the MQTT client's handlers
/// are made before it is, and must not own it).
final class WeakGateway: GatewaySink {
    private let target = Guarded<Weak?>(nil)
    private struct Weak: Sendable {
        weak var gateway: Gateway?
    }

    init() {}

    func set(_ gateway: Gateway) { target.withLock { $0 = Weak(gateway: gateway) } }

    var gateway: Gateway? { target.withLock { $0?.gateway } }

    func reading(_ address: String, _ characteristic: CharacteristicConfig, _ value: Data) {
        gateway?.reading(address, characteristic, value)
    }

    func deviceState(_ address: String, connected: Bool) { gateway?.deviceState(address, connected: connected) }

    func event(_ name: String, _ address: String?, _ fields: [(String, JSON)], text: @autoclosure () -> String) {
        gateway?.event(name, address, fields, text: text())
    }
}
