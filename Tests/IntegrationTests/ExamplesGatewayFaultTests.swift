// The ble-gateway's Gateway in this process against a simulated bluetoothd the test controls
// and a real mosquitto: a write that lands on the simulated peripheral, a link drop and a
// bluetoothd restart survived.
import BlueCapKit
import BlueZSimulator
import ExampleSupport
import Foundation
import GatewayCore
import Testing
import TestSupport

@Suite("Examples: ble-gateway faults (link drop, bluetoothd restart)", .serialized)
struct ExamplesGatewayFaultTests {
    static let address = "C0:FF:EE:00:33:01"
    static let service = "0000fff0-0000-1000-8000-00805f9b34fb"
    static let counter = "0000fff1-0000-1000-8000-00805f9b34fb"
    static let level = "0000fff2-0000-1000-8000-00805f9b34fb"
    static let base = "bluecap/faults/\(address)"

    static func device() -> SimulatedPeripheral {
        SimulatedPeripheral.spec(address: address).name("Counter").service(service) {
            $0.characteristic(counter, flags: [.read, .notify], value: Data([0, 0, 0, 0]))
            $0.characteristic(level, flags: [.read, .write], value: Data([3]))
        }
    }

    static func config() -> GatewayConfig {
        var config = GatewayConfig()
        config.gateway = "faults"
        config.adapter = "hci0"
        config.devices = [DeviceConfig(address: address, characteristics: [
            CharacteristicConfig(uuid: BLEUUID(string: counter)!, name: "counter", format: .uint32, notify: true),
            CharacteristicConfig(uuid: BLEUUID(string: level)!, name: "level", format: .uint8, read: true, writable: true),
        ])]
        config.advertisements = [AdvertisementPattern(manufacturerID: 0xFFFF)]
        return config
    }

    /// A beacon the advertisement pattern matches (not connectable).
    static func beacon(_ address: String) -> SimulatedPeripheral {
        SimulatedPeripheral.spec(address: address).connectable(false).manufacturerData(id: 0xFFFF, data: Data([1, 2, 3]))
    }

    /// Notifies `value` and waits for its reading. Called once the level's reading of this
    /// connection arrived: the level is read after the counter's subscription is made.
    static func notifyAndWait(_ simulator: BlueZSimulator, _ watcher: MQTTWatcher, _ value: UInt32) async throws {
        let from = watcher.messages.items.count
        simulator.notify(peripheral: address, characteristic: counter, value: withUnsafeBytes(of: value.littleEndian) { Data($0) })
        try await watcher.wait("\(base)/counter", from: from, timeout: .seconds(10)) { $0.json?["value"] as? Int == Int(value) }
    }

    @Test("a …/set write lands on the simulated peripheral; after a link drop and after a bluetoothd restart the gateway connects by address again and publishes notifications")
    func survives() async throws {
        try await withGatewayWorld(Self.config(), peripherals: [Self.device(), Self.beacon("C0:FF:EE:00:30:01")]) { simulator, watcher, gateway in
            // Level is read after the counter's subscription: its reading means both are set up.
            try await watcher.wait("\(Self.base)/level") { $0.json?["value"] as? Int == 3 }
            // The advertisement scan runs (started before the adapter was known to be powered on).
            try await watcher.wait("bluecap/faults/adv/C0:FF:EE:00:30:01") { _ in true }
            try await Self.notifyAndWait(simulator, watcher, 1)
            watcher.publish("\(Self.base)/level/set", #"{"value": 7, "id": "s1"}"#)
            let result = try await watcher.wait("\(Self.base)/level/set/result") { $0.json?["id"] as? String == "s1" }
            #expect(result.json?["ok"] as? Bool == true, "\(result.text)")
            #expect(simulator.value(peripheral: Self.address, characteristic: Self.level) == Data([7]))

            // The link drops.
            var from = watcher.messages.items.count
            simulator.dropLink(device: "/org/bluez/hci0/dev_" + Self.address.replacingOccurrences(of: ":", with: "_"))
            try await watcher.wait("\(Self.base)/state", from: from) { $0.json?["connected"] as? Bool == false }
            try await watcher.wait("\(Self.base)/state", from: from) { $0.json?["connected"] as? Bool == true }
            try await watcher.wait("\(Self.base)/level", from: from) { $0.json?["value"] as? Int == 7 }
            try await Self.notifyAndWait(simulator, watcher, 2)

            // bluetoothd restarts: devices forgotten; the device is heard again.
            from = watcher.messages.items.count
            try await simulator.restart()
            simulator.add(Self.device())
            try await watcher.wait("\(Self.base)/state", from: from) { $0.json?["connected"] as? Bool == false }
            try await watcher.wait("\(Self.base)/state", from: from, timeout: .seconds(40)) { $0.json?["connected"] as? Bool == true }
            try await watcher.wait("\(Self.base)/level", from: from) { $0.json?["value"] as? Int == 3 }
            try await Self.notifyAndWait(simulator, watcher, 3)
            // The restart ended the scan; it runs again: a beacon that appears now is reported.
            simulator.add(Self.beacon("C0:FF:EE:00:30:02"))
            try await watcher.wait("bluecap/faults/adv/C0:FF:EE:00:30:02", from: from) { _ in true }
            #expect(gateway.counts.dropped == 0)
        }
    }
}
