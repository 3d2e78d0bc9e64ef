// The ble-gateway's Gateway in this process: a GATT set-up that fails on a link that is up
// (discovery that never finishes, every characteristic refusing) ends that link, and the gateway
// connects again instead of sitting on a link that serves nothing.
import BlueCapKit
import BlueZSimulator
import ExampleSupport
import Foundation
import GatewayCore
import Testing
import TestSupport

@Suite("Examples: ble-gateway gives up a failed GATT set-up and connects again", .serialized)
struct ExamplesGatewaySetUpTests {
    static let address = "C0:FF:EE:00:34:01"
    static let base = "bluecap/setup/\(address)"

    /// The fault tests' device at this suite's address (changed by `configure`), followed by a
    /// gateway, with `faults` injected; runs `body`.
    static func withGateway(_ configure: (inout SimulatedPeripheral) -> Void, faults: [MethodFault] = [],
                            _ body: (BlueZSimulator, MQTTWatcher) async throws -> Void) async throws {
        var device = ExamplesGatewayFaultTests.device()
        device.address = address
        configure(&device)
        var config = ExamplesGatewayFaultTests.config()
        config.gateway = "setup"
        config.devices[0].address = address
        config.advertisements = []
        try await withGatewayWorld(config, peripherals: [device], faults: faults) { simulator, watcher, _ in
            try await body(simulator, watcher)
        }
    }

    /// The device's published states (connected or not) in order, and whether the level's
    /// reading came after the last of them.
    static func states(_ messages: [MQTTWatcher.Message]) -> (states: [Bool], levelAfterLast: Bool) {
        var states: [Bool] = []
        var level = false
        for m in messages {
            if m.topic == "\(base)/state", let c = m.json?["connected"] as? Bool {
                states.append(c)
                level = false
            } else if m.topic == "\(base)/level", m.json?["value"] as? Int == 3 {
                level = true
            }
        }
        return (states, level)
    }

    /// Waits until the device was connected, disconnected, connected again, and its level was
    /// read after that (the level is read after the counter's subscription: the set-up finished).
    static func waitForSecondSetUp(_ watcher: MQTTWatcher, timeout: Duration) async throws {
        let seen = try await watcher.messages.wait(until: { items in
            let (states, level) = states(items)
            return states.starts(with: [true, false, true]) && level
        }, timeout: timeout)
        #expect(states(seen).states == [true, false, true])
    }

    @Test("service discovery that never finishes: after its deadline the gateway disconnects, connects again and follows the device")
    func discoveryStalls() async throws {
        try await Self.withGateway({ $0.discoveryDelay = .seconds(3600) }) { simulator, watcher in
            try await watcher.wait("\(Self.base)/state") { $0.json?["connected"] as? Bool == true }
            // The next link resolves its services at once.
            simulator.updatePeripheral(Self.address) { $0.discoveryDelay = .milliseconds(2) }
            // Discovery's deadline is 15 s, the pause before connecting again 1 s.
            try await Self.waitForSecondSetUp(watcher, timeout: .seconds(40))
        }
    }

    @Test("every configured characteristic refuses (read and subscription fail): the gateway disconnects, connects again and follows the device")
    func everyCharacteristicRefuses() async throws {
        // One refusal each, so only the first set-up fails (a subscription asks for the
        // notification socket first, and StartNotify when that is refused).
        let faults = [
            MethodFault("org.bluez.GattCharacteristic1.AcquireNotify", action: .error(.failed("refused by the test")), count: 1),
            MethodFault("org.bluez.GattCharacteristic1.StartNotify", action: .error(.failed("refused by the test")), count: 1),
            MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .error(.failed("refused by the test")), count: 1),
        ]
        try await Self.withGateway({ _ in }, faults: faults) { _, watcher in
            try await Self.waitForSecondSetUp(watcher, timeout: .seconds(20))
        }
    }
}
