// CentralHarness: a private bus, a BlueZSimulator and a CentralManager on a client connection.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import TestSupport

let accelerometerService: BLEUUID = "F000AA10-0451-4000-B000-000000000000"
let accelerometerData: BLEUUID = "F000AA11-0451-4000-B000-000000000000"
let accelerometerEnabled: BLEUUID = "F000AA12-0451-4000-B000-000000000000"
let accelerometerPeriod: BLEUUID = "F000AA13-0451-4000-B000-000000000000"

/// A simulated TI SensorTag with the accelerometer service.
func sensorTag(_ address: String, rssi: Int16 = -50, dataFlags: [CharacteristicFlag] = [.read, .notify]) -> SimulatedPeripheral {
    SimulatedPeripheral.spec(address: address).name("SensorTag").rssi(rssi)
        .advertising(uuids: [accelerometerService.uuidString])
        .service(accelerometerService.uuidString) {
            $0.characteristic(accelerometerData.uuidString, flags: dataFlags, value: Data([0, 0, 64]))
            $0.characteristic(accelerometerEnabled.uuidString, flags: [.read, .write], value: Data([0]))
            $0.characteristic(accelerometerPeriod.uuidString, flags: [.read, .write], value: Data([100]))
        }
}

final class CentralHarness: Sendable {
    let bus: TestBus
    let simulator: BlueZSimulator
    let client: Connection
    let manager: CentralManager

    static func start(adapters: Int = 1) async throws -> CentralHarness {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: adapters)
        let h = try CentralHarness(bus: bus, simulator: simulator)
        try await h.manager.whenPoweredOn(timeout: .seconds(5)).value
        return h
    }

    private init(bus: TestBus, simulator: BlueZSimulator) throws {
        self.bus = bus
        self.simulator = simulator
        client = try bus.connect()
        manager = CentralManager(connection: client)
    }

    func stop() {
        manager.reset()
        simulator.stop()
        bus.stop()
    }

    /// Scans for the accelerometer service and returns the first peripheral found.
    func discover(_ address: String, timeout: Duration = .seconds(5)) async throws -> Peripheral {
        let found = Collector<Peripheral>()
        manager.startScanning(forServiceUUIDs: [accelerometerService]).onSuccess(context: .immediate) { p in
            if p.address == address { found.append(p) }
        }
        let p = try await found.wait(for: 1, timeout: timeout)[0]
        manager.stopScanning()
        return p
    }

    /// Connects and waits for `.connect`; returns the event collector.
    func connect(_ p: Peripheral, timeoutRetries: Int = 0, disconnectRetries: Int = 0,
                 connectionTimeout: Duration = .seconds(5)) async throws -> ConnectionEvents {
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

    /// Connect + discover the accelerometer service and its characteristics.
    func ready(_ address: String, disconnectRetries: Int = 0) async throws -> (Peripheral, Service, ConnectionEvents) {
        let p = try await discover(address)
        let events = try await connect(p, disconnectRetries: disconnectRetries)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        _ = try await p.discoverServices([accelerometerService], timeout: .seconds(5)).value
        let service = try require(p.service(accelerometerService), "service")
        _ = try await service.discoverCharacteristics([accelerometerData, accelerometerEnabled], timeout: .seconds(5)).value
        return (p, service, events)
    }
}

/// Connection events and failures as they arrive.
final class ConnectionEvents: Sendable {
    let events = Collector<ConnectionEvent>()
    let failures = Collector<String>()
}

struct Missing: Error, CustomStringConvertible { var description: String }

/// Like `#require` for optionals without the macro's test context.
func require<T>(_ value: T?, _ what: String = "value") throws -> T {
    guard let value else { throw Missing(description: "\(what) missing") }
    return value
}
