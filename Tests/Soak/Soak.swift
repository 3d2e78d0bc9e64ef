// Soak: the two long runs, each returning its samples.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import TestSupport
import Locking


struct SoakFailure: Error, CustomStringConvertible { var description: String }

enum Soak {
    /// `count` cycles of connect → discover → read → disconnect on one peripheral, sampled every
    /// tenth of the run. Nothing needs to settle afterwards: every operation's deadline timer,
    /// and every wait of this harness, is cancelled as it completes.
    static func cycles(count: Int) async throws -> SoakRun {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let address = "C0:FF:EE:00:00:01"
        rig.simulator.add(simulatedSensorTag(address))
        let peripheral = try await rig.discover(address)
        var run = SoakRun(name: "\(count) connect/discover/read/disconnect cycles", unit: "cycle")
        let events = Collector<ConnectionEvent>()
        peripheral.connect(disconnectRetries: .max, capacity: 4).onSuccess(context: .immediate) { events.append($0.connectionEvent) }
        let clock = ContinuousClock()
        let start = clock.now
        for i in 0..<count {
            if i > 0 { peripheral.reconnect() }
            let connected = try await events.wait(for: 2 * i + 1, timeout: .seconds(10))[2 * i]
            guard connected == .connect else { throw SoakFailure(description: "cycle \(i): \(connected)") }
            _ = try await withDeadline(.seconds(10), "discover \(i)") { try await peripheral.discoverServices([AccelerometerUUIDs.service]).value }
            guard let c = peripheral.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.period) else { throw SoakFailure(description: "cycle \(i): no characteristic") }
            let value = try await withDeadline(.seconds(10), "read \(i)") { try await c.read().value.value }
            guard value == Data([100]) else { throw SoakFailure(description: "cycle \(i): read \(String(describing: value))") }
            peripheral.disconnect()
            let down = try await events.wait(for: 2 * i + 2, timeout: .seconds(10))[2 * i + 1]
            guard down == .forceDisconnect else { throw SoakFailure(description: "cycle \(i): \(down)") }
            if i == 0 || (i + 1) % max(1, count / 10) == 0 { run.sample(at: i + 1) }
        }
        run.elapsed = clock.now - start
        peripheral.terminate()
        return run
    }

    /// Scans for `seconds` while `devices` peripherals change RSSI 20 times a second.
    static func scanStorm(seconds: Int, devices: Int = 200) async throws -> SoakRun {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (simulator, manager) = (rig.simulator, rig.manager)
        var run = SoakRun(name: "scan storm, \(devices) devices at 20 Hz for \(seconds) s", unit: "s")
        let reports = Counter()
        let failures = Counter()
        manager.startScanning(capacity: 16, options: ScanOptions(allowDuplicates: true)).onComplete(context: .immediate) { r in
            if case .success = r { reports.add() } else { failures.add() }
        }
        simulator.startRSSIStorm(devices: devices, hz: 20)
        defer { simulator.stopRSSIStorm() }
        let clock = ContinuousClock()
        let start = clock.now
        run.sample(at: 0)
        let marks = [seconds / 10, seconds / 2, seconds].filter { $0 > 0 }
        for mark in marks {
            try await Task.sleep(until: start + .seconds(mark), clock: clock)
            run.sample(at: mark, extra: "\(reports.value) reports")
            if failures.value > 0 || !manager.isScanning { throw SoakFailure(description: "scan ended after \(mark) s") }
        }
        run.elapsed = clock.now - start
        guard reports.value > 0 else { throw SoakFailure(description: "no scan reports") }
        return run
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let n = Locked(0)
    func add() { n.withLock { $0 += 1 } }
    var value: Int { n.withLock { $0 } }
}
