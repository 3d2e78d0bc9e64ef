// SimulatedWorld: `--simulate` — a private dbus-daemon and a BlueZSimulator with two linked
// adapters, in this process, so the examples run on a machine without Bluetooth.

import BlueZSimulator
import BlueCapKit
import Foundation

/// A private bus with a simulated bluetoothd on it: hci0 and hci1 hear each other through the
/// simulator's virtual radio (what hci1 registers — GATT application, advertisement — hci0
/// discovers and connects to). ``stop()`` tears both down; it is idempotent.
package final class SimulatedWorld: Sendable {
    /// The private dbus-daemon.
    package let daemon: BusDaemon
    /// The simulated bluetoothd.
    package let simulator: BlueZSimulator

    private init(daemon: BusDaemon, simulator: BlueZSimulator) {
        self.daemon = daemon
        self.simulator = simulator
    }

    /// Starts the daemon and the simulator (two adapters), plus `neighbours` extra simulated
    /// devices in range so a scan has something besides the example's own peripheral.
    package static func start(neighbours: Bool) async throws -> SimulatedWorld {
        let daemon = try BusDaemon()
        do {
            // As bluetoothd -E: AdvertisementMonitorManager1 is there (central-scanner --passive).
            let simulator = try await BlueZSimulator.start(busAddress: daemon.address, adapters: 2, experimental: true)
            if neighbours {
                simulator.add(SimulatedPeripheral.spec(address: "C0:FF:EE:00:00:01").name("Heart Rate Strap").rssi(-71)
                    .advertising(uuids: ["0000180d-0000-1000-8000-00805f9b34fb"]))
                simulator.add(SimulatedPeripheral.spec(address: "C0:FF:EE:00:00:02").rssi(-88)
                    .manufacturerData(id: 0x0059, data: Data([0x01, 0x02, 0x03, 0x04])))
            }
            return SimulatedWorld(daemon: daemon, simulator: simulator)
        } catch {
            daemon.stop()
            throw error
        }
    }

    /// The bus address.
    package var address: String { daemon.address }

    /// A new session on the private bus (one per role, as two processes would have).
    package func session() -> BluetoothSession { simulator.session() }

    /// Stops the simulator, then the daemon.
    package func stop() {
        simulator.stop()
        daemon.stop()
    }
}
