// AddressRig: a private bus, a BlueZSimulator imitating one BlueZ release (with or without
// --experimental) and a CentralManager on its own session, for the connect-by-address tests.
import BlueCapKit
import BlueZSimulator
import TestSupport

/// A private bus, a simulator imitating `profile`, and a manager on its own session.
struct AddressRig {
    let bus: TestBus
    let simulator: BlueZSimulator
    let session: BluetoothSession
    let manager: CentralManager

    static func start(_ profile: BlueZProfile) async throws -> AddressRig {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1, profile: profile)
        let session = bus.session()
        let rig = AddressRig(bus: bus, simulator: simulator, session: session, manager: CentralManager(adapter: "hci0", session: session))
        try await rig.manager.whenPoweredOn(timeout: .seconds(5)).value
        return rig
    }

    func stop() {
        manager.reset()
        simulator.stop()
        bus.stop()
    }

    /// The bus clients with a discovery session (or filter) on hci0, as bluetoothd counts them.
    var discoveryClients: Int { simulator.sync { $0.discoveryClients(adapter: 0).count } }
    /// The device objects bluetoothd has on hci0.
    var devices: [String] { simulator.sync { $0.devicePaths(adapter: 0) } }
}
