// The peripheral role's states after bluetoothd or the adapter goes away: a characteristic no
// central can be subscribed to any more does not say it is notifying, and an advertisement
// bluetoothd dropped does not say it is on.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

private let serviceUUID = BLEUUID("B1E0C0DE-0000-4000-8000-00000000E034")
private let charUUID = BLEUUID("B1E0C0DE-0001-4000-8000-00000000E034")

/// How the peripheral role loses bluetoothd's side of its registrations.
enum RegistrationEnding: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case bluetoothdRestart
    case adapterRemoved
    var testDescription: String { rawValue }
}

@Suite("The peripheral role's states after bluetoothd or the adapter goes", .timeLimit(.minutes(1)))
struct EndedRegistrationStateTests {
    @Test("a subscribed MutableCharacteristic reads not notifying, and the manager not advertising, once bluetoothd or the adapter is gone",
          arguments: RegistrationEnding.allCases)
    func registrationsTellTheTruth(_ ending: RegistrationEnding) async throws {
        let characteristic = MutableCharacteristic(uuid: charUUID, properties: [.read, .notify], permissions: [.readable], value: Data([1]))
        let service = MutableService(uuid: serviceUUID, characteristics: [characteristic])
        let rig = try await PeripheralRig.start(serving: service)
        defer { Task { await rig.stop() } }
        let subscriptions = Collector<SubscriptionEvent>()
        characteristic.whenSubscriptionChanges().onSuccess(context: .immediate) { subscriptions.append($0) }
        let advertising = Collector<Bool>()
        rig.peripheralManager.whenAdvertisingChanges().onSuccess(context: .immediate) { advertising.append($0) }

        // A central subscribes.
        let found = Collector<Peripheral>()
        rig.central.startScanning(forServiceUUIDs: [serviceUUID]).onSuccess(context: .immediate) { found.append($0) }
        let p = try await found.wait(for: 1, timeout: .seconds(5))[0]
        rig.central.stopScanning()
        let events = Collector<ConnectionEvent>()
        p.connect(connectionTimeout: .seconds(5)).onSuccess(context: .immediate) { events.append($0.connectionEvent) }
        _ = try await events.wait(for: 1, timeout: .seconds(5))
        _ = try await p.discoverServices([serviceUUID], timeout: .seconds(5)).value
        let remote = try need(p.service(serviceUUID)?.characteristic(charUUID), "remote characteristic")
        _ = try await remote.startNotifying(timeout: .seconds(5)).value
        _ = try await subscriptions.wait(for: 1, timeout: .seconds(5))
        #expect(characteristic.isNotifying && rig.peripheralManager.isAdvertising)
        let ads = advertising.items.count

        switch ending {
        case .bluetoothdRestart: try await rig.simulator.restart()
        case .adapterRemoved: rig.simulator.removeAdapter(1)
        }
        // Wait for the advertisement to be reported off (bluetoothd dropped it with its adapter).
        let off = try await advertising.wait(for: ads + 1, timeout: .seconds(5))
        #expect(off.last == false)
        if ending == .adapterRemoved {
            #expect(!rig.peripheralManager.isAdvertising)
            // A manager bound to the removed adapter leaves poweredOn (after the advertisement's release).
            _ = try await rig.peripheralManager.whenStateChanges().withFilter { $0 != .poweredOn }.first()
                .timeout(after: .seconds(5)).value
        }
        // The subscription ends with them: with the acquired socket, when its end of file is
        // handled (on the sockets' queue, which a slow run, TSan's, may reach after the state).
        if characteristic.isNotifying {
            let ended = try await subscriptions.wait(for: 2, timeout: .seconds(5))
            #expect(ended.last == .unsubscribed, "\(ended)")
        }
        #expect(!characteristic.isNotifying, "no central can be subscribed through a bluetoothd or adapter that is gone")
    }
}
