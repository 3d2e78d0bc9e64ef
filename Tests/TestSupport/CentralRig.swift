// CentralRig: a private bus, a BlueZSimulator and a CentralManager on a client connection,
// shared by the integration, reliability and soak tiers.
@_spi(Testing) import BlueCapKit
import BlueZSimulator
import DBus
import Foundation

// MARK: - The simulated SensorTag

/// The TI SensorTag accelerometer UUIDs (DESIGN.md §6), the profile's own constants
/// (`TISensorTag.AccelerometerService`) under short names: the one spelling the tests use.
public enum AccelerometerUUIDs {
    /// `F000AA10-…`: the accelerometer service.
    public static let service: BLEUUID = TISensorTag.AccelerometerService.uuid
    /// `F000AA11-…`: data, read + notify, 3 × Int8.
    public static let data: BLEUUID = TISensorTag.AccelerometerService.Data.uuid
    /// `F000AA12-…`: enabled, read + write, UInt8 (initially 0).
    public static let enabled: BLEUUID = TISensorTag.AccelerometerService.Enabled.uuid
    /// `F000AA13-…`: update period, read + write, UInt8 (initially 100).
    public static let period: BLEUUID = TISensorTag.AccelerometerService.UpdatePeriod.uuid
}

/// A simulated SensorTag named "SensorTag" advertising the accelerometer service, with its data,
/// enabled and period characteristics; `extraServiceFirst` puts a battery service (`180F`) before
/// it, so every handle shifts (a firmware change).
public func simulatedSensorTag(
    _ address: String, rssi: Int16 = -50, dataFlags: [CharacteristicFlag] = [.read, .notify],
    extraServiceFirst: Bool = false, dataUUID: BLEUUID = AccelerometerUUIDs.data
) -> SimulatedPeripheral {
    var spec = SimulatedPeripheral.spec(address: address).name("SensorTag").rssi(rssi)
        .advertising(uuids: [AccelerometerUUIDs.service.uuidString])
    if extraServiceFirst {
        spec = spec.service("180F") { $0.characteristic("2A19", flags: [.read, .write], value: Data([87])) }
    }
    return spec.service(AccelerometerUUIDs.service.uuidString) {
        $0.characteristic(dataUUID.uuidString, flags: dataFlags, value: Data([0, 0, 64]))
        $0.characteristic(AccelerometerUUIDs.enabled.uuidString, flags: [.read, .write], value: Data([0]))
        $0.characteristic(AccelerometerUUIDs.period.uuidString, flags: [.read, .write], value: Data([100]))
    }
}

// MARK: - CentralRig

/// Connection events and failures of one `connect` stream, as they arrive.
public final class ConnectionEvents: Sendable {
    /// The events.
    public let events = Collector<ConnectionEvent>()
    /// The stream's failures, described.
    public let failures = Collector<String>()

    public init() {}
}

/// A private bus with a BlueZSimulator (`adapters` adapters) and a `CentralManager` on its own
/// client connection, powered on. With `experimental` the simulator runs as `bluetoothd -E`.
public final class CentralRig: Sendable {
    /// The private bus.
    public let bus: TestBus
    /// The simulated bluetoothd.
    public let simulator: BlueZSimulator
    /// The manager's session.
    public let session: BluetoothSession
    /// The session's bus connection.
    public let client: Connection
    /// The manager under test.
    public let manager: CentralManager
    /// With `manualClock`, the manager's clock: every deadline of the library (timeouts,
    /// backoff, delays) falls due only when the test calls ``advance(by:once:)``. The simulated
    /// world (bluetoothd's own delays) keeps real time, so a peripheral that never answers stays
    /// silent however far the clock moves, and a delayed reply arrives when it arrives.
    public let clock: ManualClock?

    /// Starts the bus and the simulator and waits until the manager is powered on. With
    /// `manualClock`, the manager's deadlines run on ``clock`` (real time otherwise); with
    /// `experimental`, the simulator runs as `bluetoothd --experimental` (advertisement monitors);
    /// `profile` is the BlueZ release it imitates.
    public static func start(adapters: Int = 1, manualClock: Bool = false, experimental: Bool = false,
                             profile: BlueZProfile = .bluez5_66) async throws -> CentralRig {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: adapters, profile: profile, experimental: experimental)
        let rig = try CentralRig(bus: bus, simulator: simulator, clock: manualClock ? ManualClock() : nil)
        try await rig.manager.whenPoweredOn(timeout: .seconds(5)).value
        return rig
    }

    private init(bus: TestBus, simulator: BlueZSimulator, clock: ManualClock?) throws {
        self.bus = bus
        self.simulator = simulator
        self.clock = clock
        session = bus.session(clock: clock ?? SystemClock.shared)
        client = try need(session.busConnection, "the session's connection: \(session.unavailableReason ?? "")")
        manager = CentralManager(session: session)
    }

    /// Waits until the library has armed at least `pending` timers (it may arm them on another
    /// thread), then moves the manual clock by `duration`, running the deadlines that fall due
    /// on this thread. Returns the clock's reading after.
    @discardableResult
    public func advance(by duration: Duration, once pending: Int = 1) async -> Duration {
        guard let clock else { preconditionFailure("advance(by:) needs a rig started with manualClock: true") }
        await clock.waitForPending(atLeast: pending)
        clock.advance(by: duration)
        return clock.now
    }

    /// Resets the manager, stops the simulator and the bus.
    public func stop() {
        manager.reset()
        simulator.stop()
        bus.stop()
    }

    /// Scans for the accelerometer service until every address in `wanted` is found; returns
    /// the peripherals in `wanted` order.
    public func discover(_ wanted: [String], timeout: Duration = .seconds(10)) async throws -> [Peripheral] {
        let found = Collector<Peripheral>()
        let set = Set(wanted)
        manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service], capacity: max(100, wanted.count))
            .onSuccess(context: .immediate) { if set.contains($0.address) { found.append($0) } }
        let items = try await found.wait(for: wanted.count, timeout: timeout)
        manager.stopScanning()
        let byAddress = Dictionary(items.map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        return try wanted.map { try need(byAddress[$0], "peripheral \($0)") }
    }

    /// Scans until `address` is found.
    public func discover(_ address: String, timeout: Duration = .seconds(10)) async throws -> Peripheral {
        try await discover([address], timeout: timeout)[0]
    }

    /// Starts `connect` and records its events.
    public func connect(_ p: Peripheral, timeoutRetries: Int = 0, disconnectRetries: Int = 0,
                        connectionTimeout: Duration = .seconds(5)) -> ConnectionEvents {
        let events = ConnectionEvents()
        p.connect(timeoutRetries: timeoutRetries, disconnectRetries: disconnectRetries, connectionTimeout: connectionTimeout)
            .onComplete(context: .immediate) { r in
                switch r {
                case .success(let e): events.events.append(e.connectionEvent)
                case .failure(let error): events.failures.append("\(error)")
                }
            }
        return events
    }

    /// Discovered, connected, the accelerometer service and its characteristics discovered.
    public func ready(_ address: String, disconnectRetries: Int = 0) async throws -> (Peripheral, Service, ConnectionEvents) {
        let p = try await discover(address)
        let events = connect(p, disconnectRetries: disconnectRetries)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        let service = try await services(of: p)
        return (p, service, events)
    }

    /// Waits for the accelerometer service and its three characteristics.
    public func services(of p: Peripheral) async throws -> Service {
        _ = try await p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(5)).value
        let service = try need(p.service(AccelerometerUUIDs.service), "accelerometer service")
        _ = try await service.discoverCharacteristics(
            [AccelerometerUUIDs.data, AccelerometerUUIDs.enabled, AccelerometerUUIDs.period], timeout: .seconds(5)).value
        return service
    }
}

// MARK: - Small helpers

/// Thrown by ``need(_:_:)`` and ``waitUntil(_:timeout:_:)``.
public struct Missing: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// Unwraps or throws naming what is missing.
public func need<T>(_ value: T?, _ what: String = "value") throws -> T {
    guard let value else { throw Missing(description: "\(what) missing") }
    return value
}

/// Waits until `condition` holds, re-checking on a short timer, for at most `timeout`.
public func waitUntil(_ what: String, timeout: Duration = .seconds(5), _ condition: @Sendable () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        guard clock.now < deadline else { throw Missing(description: "\(what): not within \(timeout)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
