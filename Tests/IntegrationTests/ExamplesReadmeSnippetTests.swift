// The code of README.md, verbatim, compiled and run against the simulator so the README
// cannot drift from the API. Each `// README:` block below is copied into README.md as is.

import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import Synchronization
import TestSupport

// README: central-futures
/// Finds a SensorTag, connects, enables its accelerometer and streams samples.
func accelerometerSamples(manager: CentralManager) -> FutureStream<TISensorTag.AccelerometerService.Data> {
    typealias Accelerometer = TISensorTag.AccelerometerService
    return manager.whenPoweredOn()
        .flatMap { _ in manager.startScanning(forServiceUUIDs: [Accelerometer.uuid]).first() }
        .flatMap { peripheral in
            manager.stopScanning()
            return peripheral.connect(timeoutRetries: 3).withFilter { $0.connectionEvent == .connect }.first()
        }
        .flatMap { connected in connected.peripheral.discoverServices([Accelerometer.uuid]) }
        .flatMap { peripheral in peripheral.service(Accelerometer.uuid)!.discoverCharacteristics() }
        .flatMap { service in service.characteristic(Accelerometer.Enabled.uuid)!.write(Accelerometer.Enabled.yes) }
        .flatMap { enabled in
            enabled.service.characteristic(Accelerometer.UpdatePeriod.uuid)!.write(Accelerometer.UpdatePeriod(milliseconds: 100))
        }
        .flatMap { period in period.service.characteristic(Accelerometer.Data.uuid)!.startNotifying() }
        .flatMap { data in data.receiveNotificationUpdates() }
        .map { update in try SerDe.decode(Accelerometer.Data.self, from: update.data ?? Data()) }
}
// README: end

// README: central-async
/// The same with async/await: returns the first `count` samples.
func readSamples(manager: CentralManager, count: Int) async throws -> [TISensorTag.AccelerometerService.Data] {
    typealias Accelerometer = TISensorTag.AccelerometerService
    try await manager.whenPoweredOn().value
    let peripheral = try await manager.startScanning(forServiceUUIDs: [Accelerometer.uuid]).first().value
    manager.stopScanning()
    _ = try await peripheral.connect(timeoutRetries: 3).withFilter { $0.connectionEvent == .connect }.first().value
    _ = try await peripheral.discoverServices([Accelerometer.uuid]).value
    let service = try await peripheral.service(Accelerometer.uuid)!.discoverCharacteristics().value
    _ = try await service.characteristic(Accelerometer.Enabled.uuid)!.write(Accelerometer.Enabled.yes).value
    let data = try await service.characteristic(Accelerometer.Data.uuid)!.startNotifying().value
    var samples: [Accelerometer.Data] = []
    for try await update in data.receiveNotificationUpdates().values {
        samples.append(try SerDe.decode(Accelerometer.Data.self, from: update.data ?? Data()))
        if samples.count == count { break }
    }
    peripheral.disconnect()
    return samples
}
// README: end

// README: peripheral
/// Serves the accelerometer service and advertises it; Enabled accepts only 0 and 1.
func serveAccelerometer(on manager: PeripheralManager) -> Future<MutableService> {
    typealias Accelerometer = TISensorTag.AccelerometerService
    let service = MutableService(profile: Accelerometer.profile)
    let enabled = service.characteristic(Accelerometer.Enabled.uuid)!
    enabled.startRespondingToWriteRequests().onSuccess { request, central in
        let valid = request.value.map { $0.count == 1 && $0[0] <= 1 } ?? false
        enabled.respondToRequest(request, withResult: valid ? .success : .failure(.application(0x80)))
    }
    return manager.whenStateChanges().withFilter { $0 == .poweredOn }.first()
        .flatMap { _ in manager.add(service) }
        .flatMap { _ in manager.startAdvertising("SensorTag", uuids: [Accelerometer.uuid]) }
        .map { _ in service }
}

/// Then, every period while Enabled is 1 (returns false while nobody is subscribed):
func sendSample(_ service: MutableService, x: Double, y: Double, z: Double) -> Bool {
    typealias Accelerometer = TISensorTag.AccelerometerService
    return service.characteristic(Accelerometer.Data.uuid)!.updateValue(Accelerometer.Data(x: x, y: y, z: z))
}
// README: end

// README: shutdown
/// On SIGINT/SIGTERM: unregister the advertisement and the application, then exit.
func unregisterOnSignals(_ manager: PeripheralManager) {
    SignalTrap.shared.onShutdown { await manager.shutdown() }
    SignalTrap.shared.install()
}
// README: end

// README: profile
/// A service model: each property mirrors a characteristic, decoded with SerDe.
final class BatteryService: ServiceModel {
    @Characteristic("2A19") var level: UInt8
    @Characteristic("2A29") var manufacturer: String

    init() { super.init(serviceUUID: "180F") }
}

func batteryExample() throws -> UInt8 {
    let battery = BatteryService()
    try battery.update(uuid: "2A19", data: Data([87]))  // a ReadValue reply or a notification
    return battery.level                                // 87
}
// README: end

// README: profile-binding
/// The model bound to a connected peripheral: ReadValue fills it, notifications keep it current.
func followBattery(_ peripheral: Peripheral) async throws -> (BatteryService, FutureStream<BLEUUID>) {
    let battery = BatteryService()
    _ = try await peripheral.discoverServices([battery.serviceUUID]).value
    let binding = try await battery.bound(to: peripheral.service(battery.serviceUUID)!)  // StartNotify
    _ = try await battery.readAll().value   // battery.level and battery.manufacturer are set
    return (battery, binding.changes)       // "2A19" each time the level is notified
}
// battery.write(battery.$level, 50) writes (WriteValue); battery.unbind() stops notifications.
// README: end

// README: simulator
/// Your own test against a simulated bluetoothd: a private bus, a SensorTag in range.
func withSimulatedSensorTag(_ body: (CentralManager, BlueZSimulator) async throws -> Void) async throws {
    let bus = try BusDaemon()                        // a private dbus-daemon
    defer { bus.stop() }
    let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1)
    defer { simulator.stop() }
    simulator.add(SimulatedPeripheral.spec(address: "C0:FF:EE:00:00:01").name("SensorTag").rssi(-50)
        .advertising(uuids: ["F000AA10-0451-4000-B000-000000000000"]))
    let manager = CentralManager(adapter: "hci0", connection: try Connection(address: bus.address))
    try await body(manager, simulator)
}
// README: end

// README: pairing-central
/// Pairs with a peripheral whose characteristic needs encryption, then reads it.
func pairAndRead(_ manager: CentralManager, _ peripheral: Peripheral, _ secret: Characteristic) async throws -> Data? {
    let agent = PairingAgent(capability: .displayYesNo, delegate: PairingHandlers(
        confirm: { passkey, device in
            print("Does \(device.address) show \(passkey)?")   // ask the user; here: yes
            return Future(value: true)
        }))
    let registration = try await agent.register(for: manager).value   // AgentManager1.RegisterAgent
    defer { _ = registration.unregister() }
    try await peripheral.pair().value        // Device1.Pair; isPaired, isBonded turn true
    _ = try await secret.read().value        // the link is encrypted now
    return secret.value
}
// README: end

// README: pairing-peripheral
/// A characteristic only a paired central may read, and the default agent that lets centrals pair.
func serveSecret(on manager: PeripheralManager) -> Future<PairingAgentRegistration> {
    let secret = MutableCharacteristic(uuid: BLEUUID("B1E0C0DE-0001-4000-8000-00000000C0DE"), properties: [.read],
                                       permissions: [.readable, .readEncryptionRequired], value: Data([42]))
    let service = MutableService(uuid: BLEUUID("B1E0C0DE-0000-4000-8000-00000000C0DE"), characteristics: [secret])
    let agent = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
    return manager.add(service).flatMap { _ in agent.register(for: manager) }  // + RequestDefaultAgent
}
// README: end

// MARK: - The snippets, run

@Suite("README snippets", .serialized)
struct ExamplesReadmeSnippetTests {
    /// A private bus, a simulator with two adapters, the README peripheral on hci1 and a central on hci0.
    static func world(_ body: @escaping @Sendable (CentralManager, MutableService) async throws -> Void) async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let peripheralManager = PeripheralManager(adapter: "hci1", connection: try bus.connect())
        let service = try await withDeadline(.seconds(10), "serveAccelerometer") { try await serveAccelerometer(on: peripheralManager).value }
        // The peripheral's sampling loop: a timer that sends while Enabled is 1.
        let step = Counter()
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "readme.peripheral"))
        timer.schedule(deadline: .now(), repeating: .milliseconds(20))
        timer.setEventHandler {
            guard service.characteristic(TISensorTag.AccelerometerService.Enabled.uuid)?.value == Data([1]) else { return }
            let a = Double(step.next()) * 0.1
            _ = sendSample(service, x: sin(a), y: 0, z: cos(a))
        }
        timer.resume()
        defer { timer.cancel() }
        let central = CentralManager(adapter: "hci0", connection: try bus.connect())
        defer { central.reset() }
        try await body(central, service)
        await withDeadlineOrNil { await peripheralManager.shutdown() }
    }

    @Test("the README's futures central streams samples from the README's peripheral")
    func futuresCentral() async throws {
        try await Self.world { central, _ in
            let samples = collect(accelerometerSamples(manager: central))
            let got = try await samples.wait(for: 3, timeout: .seconds(15))
            #expect(got.count >= 3)
            #expect(got.allSatisfy { abs($0.x) <= 1.01 && abs($0.z) <= 1.01 })
            #expect(Set(got.prefix(3).map(\.xRaw)).count > 1, "the samples move")
        }
    }

    @Test("the README's async/await central reads samples and leaves the sensor enabled")
    func asyncCentral() async throws {
        try await Self.world { central, service in
            let samples = try await withDeadline(.seconds(15), "readSamples") { try await readSamples(manager: central, count: 3) }
            #expect(samples.count == 3)
            #expect(service.characteristic(TISensorTag.AccelerometerService.Enabled.uuid)?.value == Data([1]))
        }
    }

    @Test("the README's binding snippet reads the simulated battery and follows its notifications")
    func profileBinding() async throws {
        let h = try await CentralHarness.start()
        defer { h.stop() }
        let tag = "C0:FF:EE:00:00:08"
        h.simulator.add(sensorTag(tag).service("180F") {
            $0.characteristic("2A19", flags: [.read, .notify], value: Data([64]))
            $0.characteristic("2A29", flags: [.read], value: Data("Texas Instruments".utf8))
        })
        let peripheral = try await h.discover(tag)
        let events = h.connect(peripheral)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        let (battery, changes) = try await withDeadline(.seconds(10), "followBattery") {
            let (battery, changes) = try await followBattery(peripheral)
            return (battery.$level, changes)
        }
        #expect(battery.wrappedValue == 64)
        let seen = collect(changes)
        #expect(h.simulator.notify(peripheral: tag, characteristic: "2A19", value: Data([63])) == 1)
        _ = try await seen.wait(for: 3, timeout: .seconds(5))  // the two reads, then the notification
        #expect(battery.wrappedValue == 63)
    }

    @Test("the README's profile and simulator snippets do what they say")
    func profileAndSimulator() async throws {
        #expect(try batteryExample() == 87)
        try await withSimulatedSensorTag { manager, _ in
            try await manager.whenPoweredOn().value
            let found = try await withDeadline(.seconds(10), "scan") {
                try await manager.startScanning(forServiceUUIDs: [TISensorTag.AccelerometerService.uuid]).first().value
            }
            manager.stopScanning()
            #expect(found.name == "SensorTag")
            #expect(found.address == "C0:FF:EE:00:00:01")
        }
    }
}

/// Numbers steps for the sampling timer.
private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

// MARK: - README.md holds these blocks verbatim

@Suite("README.md")
struct ReadmeTextTests {
    @Test("every `// README:` block of this file appears verbatim in README.md")
    func readmeHoldsTheCompiledSnippets() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        var blocks: [(name: String, text: String)] = []
        var current: (name: String, lines: [String])?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line == "// README: end", let c = current {
                blocks.append((c.name, c.lines.joined(separator: "\n")))
                current = nil
            } else if line.hasPrefix("// README: ") {
                current = (String(line.dropFirst("// README: ".count)), [])
            } else if current != nil {
                current!.lines.append(line)
            }
        }
        #expect(blocks.count == 9)
        for block in blocks {
            #expect(readme.contains("```swift\n" + block.text + "\n```"), "README.md lacks the \(block.name) snippet as compiled here")
        }
    }
}
