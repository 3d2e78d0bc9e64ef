// bluecap-bench server-notify [count]: the peripheral role's notifications through the socket
// the simulated bluetoothd acquires (AcquireNotify on our characteristic) against
// PropertiesChanged(Value) messages, on one private bus, in one process.
import BlueCapKit
import BlueCapTesting
import BlueZSimulator
import Foundation
import Glibc
import Locking

/// Counts arrivals; `wait(for:)` resumes once that many arrived (no polling).
private final class Arrivals: Sendable {
    private struct State {
        var count = 0
        var waiter: (target: Int, continuation: CheckedContinuation<Void, Never>)?
    }
    private let state = Locked(State())

    func add() {
        let resume = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.count += 1
            guard let w = s.waiter, s.count >= w.target else { return nil }
            s.waiter = nil
            return w.continuation
        }
        resume?.resume()
    }

    func wait(for target: Int) async {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.count >= target { return true }
                s.waiter = (target, k)
                return false
            }
            if now { k.resume() }
        }
    }
}

func serverNotifyBench(count: Int, rounds: Int) async throws {
    let daemon = try BusDaemon()
    defer { daemon.stop() }
    let simulator = try await BlueZSimulator.start(busAddress: daemon.address, adapters: 2)
    defer { simulator.stop() }
    let serviceUUID: BLEUUID = "0000FEF0-0000-1000-8000-00805F9B34FB"
    let socketUUID: BLEUUID = "0000FEF1-0000-1000-8000-00805F9B34FB", messageUUID: BLEUUID = "0000FEF2-0000-1000-8000-00805F9B34FB"
    let viaSocket = MutableCharacteristic(uuid: socketUUID, properties: [.notify], permissions: [.readable], value: Data(count: 20))
    let viaMessages = MutableCharacteristic(uuid: messageUUID, properties: [.notify], permissions: [.readable], value: Data(count: 20))
    viaMessages.offersNotifySocket = false

    let peripheralManager = PeripheralManager(adapter: "hci1", session: BluetoothSession(bus: .address(daemon.address)))
    let central = CentralManager(adapter: "hci0", session: BluetoothSession(bus: .address(daemon.address)))
    try await peripheralManager.whenPoweredOn(timeout: .seconds(10)).value
    try await central.whenPoweredOn(timeout: .seconds(10)).value
    try await peripheralManager.add(MutableService(uuid: serviceUUID, characteristics: [viaSocket, viaMessages])).value
    try await peripheralManager.startAdvertising("Bench", uuids: [serviceUUID]).value
    let peripheral = try await central.startScanning(forServiceUUIDs: [serviceUUID]).first().value
    central.stopScanning()
    _ = try await peripheral.connect(connectionTimeout: .seconds(10)).first().value
    _ = try await peripheral.discoverServices([serviceUUID], timeout: .seconds(10)).value
    guard let service = peripheral.service(serviceUUID) else { throw BenchFailure("service not discovered") }
    _ = try await service.discoverCharacteristics(timeout: .seconds(10)).value

    print("server-notify: \(count) notifications of 20 bytes per round, windows of 100, \(rounds) rounds per path, medians")
    var results: [String: [(rate: Double, cpu: Double)]] = [:]
    for round in 0..<(rounds * 2) {
        let socket = round % 2 == 0
        let local = socket ? viaSocket : viaMessages
        guard let remote = service.characteristic(socket ? socketUUID : messageUUID) else { throw BenchFailure("characteristic") }
        let arrivals = Arrivals()
        let updates = remote.receiveNotificationUpdates(capacity: 1_000)
        updates.onSuccess(context: .immediate) { _ in arrivals.add() }
        _ = try await remote.startNotifying(timeout: .seconds(10)).value
        // The stream replays earlier rounds' events: the state decides, each event re-checks it.
        if !local.isNotifying { for try await _ in local.whenSubscriptionChanges().values where local.isNotifying { break } }
        guard local.isNotifyAcquired == socket else { throw BenchFailure("acquired \(local.isNotifyAcquired), expected \(socket)") }
        let t0 = ContinuousClock.now, cpu0 = processCPU()
        var sent = 0
        while sent < count {
            for _ in 0..<min(100, count - sent) {
                sent += 1
                var value = Data(count: 20)
                value.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(sent).littleEndian, as: UInt32.self) }
                guard local.updateValue(withData: value) else { throw BenchFailure("notification \(sent) not sent") }
            }
            await arrivals.wait(for: sent)
        }
        let d = ContinuousClock.now - t0
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        results[socket ? "socket" : "messages", default: []].append((Double(count) / seconds, (processCPU() - cpu0) / Double(count) * 1e6))
        _ = try await remote.stopNotifying(timeout: .seconds(10)).value
        if local.isNotifying { for try await _ in local.whenSubscriptionChanges().values where !local.isNotifying { break } }
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let s = results["socket"] ?? [], m = results["messages"] ?? []
    let sCPU = median(s.map(\.cpu)), mCPU = median(m.map(\.cpu))
    print(String(format: "  PropertiesChanged (baseline): %8.0f notifications/s  %6.1f us CPU each (process: app + simulated bluetoothd + central)",
                 median(m.map(\.rate)), mCPU))
    print(String(format: "  acquired socket:              %8.0f notifications/s  %6.1f us CPU each  (%.2fx baseline CPU, %.2fx rate)",
                 median(s.map(\.rate)), sCPU, sCPU / mCPU, median(s.map(\.rate)) / median(m.map(\.rate))))
    peripheral.terminate()
    _ = try? await peripheralManager.shutdown().value
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
