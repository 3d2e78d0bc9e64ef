// PeripheralRig: the two-role world — a private bus, a BlueZSimulator with two linked adapters,
// a PeripheralManager on hci1 and a central on hci0 — shared by the peripheral-role integration
// tests, the notification-order tests and the security tests. (CentralRig is the central-only one.)
// PeripheralRig+RawCentral: waits on what it records and the raw D-Bus central on hci0.
@_spi(Testing) import BlueCapKit
import BlueZSimulator
import DBus
import Foundation

/// A private bus with a BlueZSimulator (two adapters; the virtual radio carries what hci1
/// publishes to hci0), a `PeripheralManager` on hci1 and a `CentralManager` on hci0, each on its
/// own client connection, both powered on. With a service, the peripheral serves and advertises it.
public final class PeripheralRig: Sendable {
    /// The private bus.
    public let bus: TestBus
    /// The simulated bluetoothd.
    public let simulator: BlueZSimulator
    /// The peripheral manager's connection.
    public let peripheralConnection: Connection
    /// The peripheral role, on hci1.
    public let peripheralManager: PeripheralManager
    /// The central's connection (also usable for raw D-Bus calls on hci0).
    public let centralConnection: Connection
    /// The central role, on hci0.
    public let central: CentralManager
    /// The service the peripheral serves and advertises, if any.
    public let service: MutableService?
    /// With `recording: true`, what the rig records (see ``signals``, ``states``, ``advertising``).
    public let recorder: PeripheralRigRecorder?
    /// With `manualClock: true`, the peripheral manager's clock: the request timeouts of its
    /// characteristics fall due only when the test advances it (the central keeps real time).
    public let clock: ManualClock?

    /// Starts the bus and the simulator and waits until both managers are powered on; with
    /// `service`, adds it and advertises `name` with its UUID first. With `recording`, the rig
    /// records signals, states and advertising changes from the start (``recorder``); with
    /// `manualClock`, the peripheral manager runs on ``clock``.
    public static func start(serving service: MutableService? = nil, advertisingAs name: String = "PeripheralRig",
                             recording: Bool = false, manualClock: Bool = false) async throws -> PeripheralRig {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        let rig = try PeripheralRig(bus: bus, simulator: simulator, service: service, recording: recording,
                                    clock: manualClock ? ManualClock() : nil)
        do {
            try await rig.recorder?.established()
            let pm = rig.peripheralManager
            try await withDeadline(.seconds(10), "serve") {
                for try await state in pm.whenStateChanges().values where state == .poweredOn { break }
                guard let service else { return }
                try await pm.add(service).value
                try await pm.startAdvertising(name, uuids: [service.uuid]).value
            }
            try await rig.central.whenPoweredOn(timeout: .seconds(5)).value
        } catch {
            await rig.stop()
            throw error
        }
        return rig
    }

    private init(bus: TestBus, simulator: BlueZSimulator, service: MutableService?, recording: Bool, clock: ManualClock?) throws {
        self.bus = bus
        self.simulator = simulator
        self.service = service
        self.clock = clock
        // Two sessions, as the two roles would be two programs.
        let peripheralSession = bus.session(clock: clock ?? SystemClock.shared), centralSession = bus.session()
        let peripheralConnection = try need(peripheralSession.busConnection, "the peripheral session's connection")
        let centralConnection = try need(centralSession.busConnection, "the central session's connection")
        let peripheralManager = PeripheralManager(adapter: "hci1", session: peripheralSession)
        self.peripheralConnection = peripheralConnection
        self.peripheralManager = peripheralManager
        self.centralConnection = centralConnection
        central = CentralManager(adapter: "hci0", session: centralSession)
        // Subscribed before anything else happens, so the first state is recorded.
        recorder = recording
            ? PeripheralRigRecorder(central: centralConnection, peripheral: peripheralConnection, manager: peripheralManager)
            : nil
    }

    /// Resets the central, shuts the peripheral down (bounded), stops the simulator and the bus.
    public func stop() async {
        recorder?.cancel()
        central.reset()
        _ = try? await withDeadline(.seconds(5), "shutdown") { _ = try? await self.peripheralManager.shutdown().value; return true }
        simulator.stop()
        bus.stop()
    }

    // MARK: The central side

    /// Scans on hci0 for the served service, connects, and discovers the service and its
    /// characteristics; returns the service as the central sees it.
    public func connectService(timeout: Duration = .seconds(5)) async throws -> Service {
        let served = try need(service, "served service")
        let found = Collector<Peripheral>()
        central.startScanning(forServiceUUIDs: [served.uuid]).onSuccess(context: .immediate) { found.append($0) }
        let peripheral = try await found.wait(for: 1, timeout: timeout * 2)[0]
        central.stopScanning()
        let connected = Collector<ConnectionEvent>()
        peripheral.connect(connectionTimeout: timeout).onSuccess(context: .immediate) { connected.append($0.connectionEvent) }
        let first = try await connected.wait(for: 1, timeout: timeout * 2)[0]
        guard first == .connect else { throw Missing(description: "connection: \(first) instead of connect") }
        _ = try await peripheral.discoverServices([served.uuid], timeout: timeout).value
        let remote = try need(peripheral.service(served.uuid), "service \(served.uuid)")
        _ = try await remote.discoverCharacteristics(served.characteristics.map(\.uuid), timeout: timeout).value
        return remote
    }
}
