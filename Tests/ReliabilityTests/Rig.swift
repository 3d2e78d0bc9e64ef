// Rig: a private bus, a BlueZSimulator and a CentralManager for the reliability suite.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

let accService: BLEUUID = "F000AA10-0451-4000-B000-000000000000"
let accData: BLEUUID = "F000AA11-0451-4000-B000-000000000000"
let accEnabled: BLEUUID = "F000AA12-0451-4000-B000-000000000000"
let accPeriod: BLEUUID = "F000AA13-0451-4000-B000-000000000000"

/// A simulated SensorTag (accelerometer service), optionally with more services first.
func tag(_ address: String, extraServiceFirst: Bool = false, dataUUID: BLEUUID = accData) -> SimulatedPeripheral {
    var spec = SimulatedPeripheral.spec(address: address).name("SensorTag").rssi(-50)
        .advertising(uuids: [accService.uuidString])
    if extraServiceFirst {
        spec = spec.service("180F") { $0.characteristic("2A19", flags: [.read, .write], value: Data([87])) }
    }
    return spec.service(accService.uuidString) {
        $0.characteristic(dataUUID.uuidString, flags: [.read, .notify], value: Data([0, 0, 64]))
        $0.characteristic(accEnabled.uuidString, flags: [.read, .write], value: Data([0]))
        $0.characteristic(accPeriod.uuidString, flags: [.read, .write], value: Data([100]))
    }
}

/// How soon "at once" must be: far below the 20–30 s timeouts of the operations it is checked
/// against, with room for a loaded 2-core machine or a sanitizer build.
let promptly: Duration = .seconds(8)

/// True in an AddressSanitizer build, which keeps freed memory in quarantine (RSS checks are moot).
let underAddressSanitizer: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

/// `n` distinct addresses `C0:FF:EE:00:xx:yy`.
func addresses(_ n: Int, block: Int = 0) -> [String] {
    (0..<n).map { String(format: "C0:FF:EE:%02X:%02X:%02X", block, $0 / 256, $0 % 256) }
}

/// The device path of `address` on hci0.
func devicePath(_ address: String) -> String { "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_") }

/// Connection events and failures as they arrive.
final class Events: Sendable {
    let events = Collector<ConnectionEvent>()
    let failures = Collector<String>()
}

final class Rig: Sendable {
    let bus: TestBus
    let simulator: BlueZSimulator
    let client: Connection
    let manager: CentralManager

    static func start(adapters: Int = 1) async throws -> Rig {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: adapters)
        let rig = try Rig(bus: bus, simulator: simulator)
        try await rig.manager.whenPoweredOn(timeout: .seconds(5)).value
        return rig
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

    /// Scans until every address in `wanted` is found; returns them in `wanted` order.
    func discover(_ wanted: [String], timeout: Duration = .seconds(10)) async throws -> [Peripheral] {
        let found = Collector<Peripheral>()
        let set = Set(wanted)
        manager.startScanning(forServiceUUIDs: [accService], capacity: max(100, wanted.count))
            .onSuccess(context: .immediate) { if set.contains($0.address) { found.append($0) } }
        let items = try await found.wait(for: wanted.count, timeout: timeout)
        manager.stopScanning()
        let byAddress = Dictionary(items.map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        return try wanted.map { try need(byAddress[$0], "peripheral \($0)") }
    }

    func discover(_ address: String) async throws -> Peripheral { try await discover([address])[0] }

    /// Starts `connect` and records events.
    func connect(_ p: Peripheral, timeoutRetries: Int = 0, disconnectRetries: Int = 0,
                 connectionTimeout: Duration = .seconds(5)) -> Events {
        let events = Events()
        p.connect(timeoutRetries: timeoutRetries, disconnectRetries: disconnectRetries, connectionTimeout: connectionTimeout)
            .onComplete(context: .immediate) { r in
                switch r {
                case .success(let e): events.events.append(e.connectionEvent)
                case .failure(let error): events.failures.append("\(error)")
                }
            }
        return events
    }

    /// Discovered, connected, services and accelerometer characteristics discovered.
    func ready(_ address: String, disconnectRetries: Int = 0) async throws -> (Peripheral, Service, Events) {
        let p = try await discover(address)
        let events = connect(p, disconnectRetries: disconnectRetries)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        let service = try await services(of: p)
        return (p, service, events)
    }

    /// Waits for the accelerometer service and its characteristics.
    func services(of p: Peripheral) async throws -> Service {
        _ = try await p.discoverServices([accService], timeout: .seconds(5)).value
        let service = try need(p.service(accService), "accelerometer service")
        _ = try await service.discoverCharacteristics([accData, accEnabled, accPeriod], timeout: .seconds(5)).value
        return service
    }
}

struct Missing: Error, CustomStringConvertible { var description: String }

/// Unwraps or throws naming what is missing.
func need<T>(_ value: T?, _ what: String) throws -> T {
    guard let value else { throw Missing(description: "\(what) missing") }
    return value
}

/// The error a future failed with (nil when it succeeded), within `timeout`.
func failure<T: Sendable>(of future: Future<T>, within timeout: Duration = .seconds(5)) async throws -> (any Error)? {
    try await withDeadline(timeout, "future") { () async -> Result<Bool, any Error> in
        do { _ = try await future.value; return .success(true) } catch { return .failure(error) }
    }.failureValue
}

extension Result {
    var failureValue: Failure? { if case .failure(let e) = self { e } else { nil } }
}

/// Seconds as a Double, for messages.
extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
