// The code of the documentation, verbatim: each `// snippet: NAME | FILE | …` block below is
// copied as is into every markdown file it names (README.md, DocC articles under Sources/*/*.docc),
// as a ```swift block; DocumentationTextTests checks that each file holds it and that README.md
// shows no Swift that is not compiled here, and DocumentationSnippetTests runs the snippets
// against the simulator. This file imports only what a user imports: BlueCapKit, BlueZSimulator
// (for the testing snippet) and Foundation.

import BlueCapKit
import BlueZSimulator
import Foundation

// snippet: central-futures | README.md | Sources/BlueCapKit/BlueCapKit.docc/GettingStarted.md
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

/// Prints the samples: the system bus, the first powered adapter (or `CentralManager(adapter: "hci0")`).
func printSamples() {
    let manager = CentralManager()
    accelerometerSamples(manager: manager).onSuccess { sample in print(sample.x, sample.y, sample.z) }
}
// snippet: end

// snippet: central-async | Sources/BlueCapKit/BlueCapKit.docc/GettingStarted.md
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
// snippet: end

// snippet: peripheral | README.md | Sources/BlueCapKit/BlueCapKit.docc/GettingStarted.md
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
// snippet: end

// snippet: shutdown | Sources/BlueCapKit/BlueCapKit.docc/GettingStarted.md
/// On SIGINT/SIGTERM: unregister the advertisement and the application, then exit.
func unregisterOnSignals(_ manager: PeripheralManager) {
    SignalTrap.shared.onShutdown { _ = try? await manager.shutdown().value }
    SignalTrap.shared.install()
}
// snippet: end

// snippet: profile | Sources/BlueCapKit/BlueCapKit.docc/ProfilesAndServiceModels.md
/// A service model: each property mirrors a characteristic, decoded with SerDe.
struct BatteryService: ServiceModel {
    let serviceUUID: BLEUUID = "180F"
    @ServiceModel.Characteristic("2A19") var level: UInt8
    @ServiceModel.Characteristic("2A29") var manufacturer: String
}

func batteryExample() throws -> UInt8 {
    let battery = BatteryService()
    try battery.update(uuid: "2A19", data: Data([87]))  // a ReadValue reply or a notification
    return battery.level                                // 87
}
// snippet: end

// snippet: profile-binding | Sources/BlueCapKit/BlueCapKit.docc/ProfilesAndServiceModels.md
/// The model bound to a connected peripheral: ReadValue fills it, notifications keep it current.
func followBattery(_ peripheral: Peripheral) async throws -> (BatteryService, FutureStream<ServiceModelChange>) {
    let battery = BatteryService()
    _ = try await peripheral.discoverServices([battery.serviceUUID]).value
    let binding = try await battery.bind(to: peripheral.service(battery.serviceUUID)!).value  // StartNotify
    _ = try await battery.readAll().value   // battery.level and battery.manufacturer are set
    return (battery, binding.changes)       // each level notified: uuid "2A19", value 42, data [42]
}
// battery.write(battery.$level, 50) writes (WriteValue); battery.unbind() stops notifications.
// snippet: end

// snippet: simulator | Sources/BlueZSimulator/BlueZSimulator.docc/BlueZSimulator.md
/// Your own test against a simulated bluetoothd: a private bus, a SensorTag in range.
func withSimulatedSensorTag(_ body: (CentralManager, BlueZSimulator) async throws -> Void) async throws {
    let bus = try BusDaemon()                        // a private dbus-daemon
    defer { bus.stop() }
    let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1)
    defer { simulator.stop() }
    simulator.add(SimulatedPeripheral.spec(address: "C0:FF:EE:00:00:01").name("SensorTag").rssi(-50)
        .advertising(uuids: ["F000AA10-0451-4000-B000-000000000000"]))
    let manager = CentralManager(adapter: "hci0", session: simulator.session())
    try await body(manager, simulator)
}
// snippet: end

// snippet: pairing-central | Sources/BlueCapKit/BlueCapKit.docc/PairingAndBonding.md
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
// snippet: end

// snippet: pairing-peripheral | Sources/BlueCapKit/BlueCapKit.docc/PairingAndBonding.md
/// A characteristic only a paired central may read, and the default agent that lets centrals pair.
func serveSecret(on manager: PeripheralManager) -> Future<PairingAgentRegistration> {
    let secret = MutableCharacteristic(uuid: BLEUUID("B1E0C0DE-0001-4000-8000-00000000C0DE"), properties: [.read],
                                       permissions: [.readable, .readEncryptionRequired], value: Data([42]))
    let service = MutableService(uuid: BLEUUID("B1E0C0DE-0000-4000-8000-00000000C0DE"), characteristics: [secret])
    let agent = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
    return manager.add(service).flatMap { _ in agent.register(for: manager) }  // + RequestDefaultAgent
}
// snippet: end
