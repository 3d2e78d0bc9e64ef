// GatewaySimulation: `ble-gateway --simulate` — a simulated world to follow: a connectable
// SensorTag, advertising sensors, and optionally many devices notifying (a load test).

import BlueCapKit
import BlueZSimulator
import ExampleSupport
import Foundation
import Synchronization

/// The simulated world of `--simulate`: ExampleSupport's ``SimulatedWorld`` (private bus,
/// simulated bluetoothd, hci0 and hci1); the gateway's central on hci0; on hci1 the examples'
/// SensorTag (accelerometer service, advertising, connectable); two advertising sensors (BTHome
/// service data, manufacturer data), whose readings change every few seconds; and
/// `loadDevices` connectable devices with a counter characteristic (`FFF1` in service `FFF0`)
/// notifying `hz` times a second each.
package final class GatewaySimulation: Sendable {
    package let world: SimulatedWorld
    package let sensorTag: SensorTagPeripheral
    /// The SensorTag's address (hci1's).
    package let sensorTagAddress: String
    /// The load devices' addresses.
    package let loadAddresses: [String]
    private let timers = Guarded<[any DispatchSourceTimer]>([])
    private let sent = Atomic<Int>(0)
    private let weatherStep = Atomic<Int>(0)
    private let counter = Atomic<UInt32>(0)

    package static let bthomeSensor = "C0:FF:EE:00:10:01"
    package static let vendorSensor = "C0:FF:EE:00:10:02"
    package static let counterService = "0000fff0-0000-1000-8000-00805f9b34fb"
    package static let counterCharacteristic = "0000fff1-0000-1000-8000-00805f9b34fb"

    private init(world: SimulatedWorld, sensorTag: SensorTagPeripheral, sensorTagAddress: String, loadAddresses: [String]) {
        self.world = world
        self.sensorTag = sensorTag
        self.sensorTagAddress = sensorTagAddress
        self.loadAddresses = loadAddresses
    }

    /// Starts the world; returns once the SensorTag advertises.
    package static func start(loadDevices: Int, hz: Double, console: Console) async throws -> GatewaySimulation {
        let world = try await SimulatedWorld.start(neighbours: false)
        let tag = SensorTagPeripheral(manager: PeripheralManager(adapter: "hci1", session: world.session()), name: "SensorTag",
                                      console: console.background("simulated SensorTag (hci1): "))
        do { _ = try await tag.start().value } catch {
            world.stop()
            throw error
        }
        let sim = world.simulator
        sim.add(SimulatedPeripheral.spec(address: bthomeSensor).name("Greenhouse").rssi(-67).connectable(false)
            .serviceData(uuid: BTHome.uuid, data: BTHome.encode(temperature: 21.5, humidity: 48, battery: 97)), inRangeOf: [0])
        sim.add(SimulatedPeripheral.spec(address: vendorSensor).rssi(-80).connectable(false)
            .manufacturerData(id: 0x0059, data: Data([0x01, 0x02, 0x03, 0x04])), inRangeOf: [0])
        let addresses = (0..<loadDevices).map { String(format: "C0:FF:EE:01:%02X:%02X", $0 / 256, $0 % 256) }
        for address in addresses {
            sim.add(SimulatedPeripheral.spec(address: address).name("Counter").rssi(-60)
                .service(counterService) { $0.characteristic(counterCharacteristic, flags: [.read, .notify], value: Data([0, 0, 0, 0])) },
                    inRangeOf: [0])
        }
        let simulation = GatewaySimulation(world: world, sensorTag: tag, sensorTagAddress: sim.adapterAddress(1) ?? "?", loadAddresses: addresses)
        simulation.startWeather()
        if !addresses.isEmpty { simulation.startLoad(hz: hz) }
        return simulation
    }

    /// The configuration `--simulate` uses without `--config`: the SensorTag's accelerometer
    /// (enabled on connect, period writable), each load device's counter, both sensor patterns.
    package func defaultConfig() -> GatewayConfig {
        typealias A = TISensorTag.AccelerometerService
        var config = GatewayConfig()
        config.gateway = "simulated"
        config.devices = [DeviceConfig(address: sensorTagAddress, name: "Simulated SensorTag", characteristics: [
            CharacteristicConfig(uuid: A.Data.uuid, service: A.uuid, name: "accelerometer", notify: true),
            CharacteristicConfig(uuid: A.Enabled.uuid, service: A.uuid, name: "enabled", format: .uint8, read: true,
                                 writable: true, writeOnConnect: Data([1])),
            CharacteristicConfig(uuid: A.UpdatePeriod.uuid, service: A.uuid, name: "period", format: .uint8, read: true, writable: true),
        ])]
        config.devices += loadAddresses.map { address in
            DeviceConfig(address: address, characteristics: [
                CharacteristicConfig(uuid: BLEUUID(string: Self.counterCharacteristic)!, name: "counter", format: .uint32, notify: true),
            ])
        }
        config.advertisements = [AdvertisementPattern(serviceData: BLEUUID(string: BTHome.uuid)!, bthome: true),
                                 AdvertisementPattern(manufacturerID: 0x0059)]
        config.connectionSlots = loadAddresses.count + 2
        return config
    }

    /// Notifications the load devices sent that reached a central.
    package var notificationsSent: Int { sent.load(ordering: .relaxed) }

    /// Stops the timers, the SensorTag and the world.
    package func stop() async {
        timers.withLock { all in
            for t in all { t.cancel() }
            all = []
        }
        await sensorTag.shutdown()
        world.stop()
    }

    // MARK: Timers

    private func every(_ interval: Duration, _ body: @escaping @Sendable () -> Void) {
        let ns = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        // Made under the lock: the timer is not Sendable, so it never leaves the mutex's state.
        timers.withLock { all in
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "ble-gateway.simulation"))
            timer.schedule(deadline: .now() + .nanoseconds(ns), repeating: .nanoseconds(max(1_000, ns)))
            timer.setEventHandler(handler: body)
            timer.resume()
            all.append(timer)
        }
    }

    /// The BTHome sensor's temperature drifts every 5 s (a new advertisement to report).
    private func startWeather() {
        let sim = world.simulator
        every(.seconds(5)) { [weak self] in
            guard let n = self?.weatherStep.add(1, ordering: .relaxed).newValue else { return }
            let data = BTHome.encode(temperature: 21.5 + Double(n % 10) / 10, humidity: 48, battery: 97)
            sim.updatePeripheral(Self.bthomeSensor) { $0 = $0.serviceData(uuid: BTHome.uuid, data: data) }
        }
    }

    /// Each load device notifies its counter `hz` times a second.
    private func startLoad(hz: Double) {
        let sim = world.simulator
        let addresses = loadAddresses
        every(.nanoseconds(Int64(1_000_000_000 / hz))) { [weak self] in
            for address in addresses {
                guard let self else { return }
                let n = self.counter.add(1, ordering: .relaxed).newValue
                let reached = sim.notify(peripheral: address, characteristic: Self.counterCharacteristic,
                                         value: withUnsafeBytes(of: n.littleEndian) { Data($0) })
                if reached > 0 { self.sent.add(1, ordering: .relaxed) }
            }
        }
    }
}
