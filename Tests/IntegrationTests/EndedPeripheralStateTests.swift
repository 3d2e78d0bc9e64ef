// What a peripheral reports once it has ended: terminated by us (`forget()`, `terminate()`) or
// its device object gone from BlueZ (removed by bluetoothd, bluetoothd restarting, the adapter
// going away). Every public state property of the peripheral and of its services,
// characteristics and descriptors reads what is true now; the records (identity, last values)
// stay what they were.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

private let tagAddress = "C0:FF:EE:00:34:01"

/// How the peripheral ends.
enum PeripheralEnding: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `Peripheral.forget()`: `Adapter1.RemoveDevice`, then terminated.
    case forget
    /// `Peripheral.terminate()`: the device object stays in BlueZ (bonded, services cached).
    case terminate
    /// Another client removes the device (`Adapter1.RemoveDevice` in bluetoothd).
    case removedByBluetoothd
    /// bluetoothd restarts: every object goes, the name owner changes.
    case bluetoothdRestart
    /// The adapter goes away with its devices.
    case adapterRemoved

    var terminates: Bool { self == .forget || self == .terminate }
    var testDescription: String { rawValue }
}

@Suite("A peripheral that ended tells the truth", .timeLimit(.minutes(1)))
struct EndedPeripheralStateTests {
    @Test("after it ends, every public state of a peripheral and of its services, characteristics and descriptors reads what is true now",
          arguments: PeripheralEnding.allCases)
    func everyStateReadsTheTruth(_ ending: PeripheralEnding) async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(simulatedSensorTag(tagAddress))
        let (p, service, events) = try await rig.ready(tagAddress)
        try await p.pair(timeout: .seconds(5)).value
        try await p.trust().value
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        _ = try await data.read().value
        _ = try await data.startNotifying(timeout: .seconds(5)).value
        let ccc = try need(data.descriptor("2902"), "CCC")
        _ = try await ccc.read().value
        let characteristics = service.characteristics
        let descriptors = characteristics.flatMap(\.descriptors)
        let cccValue = ccc.value

        // Live: everything says so (what the walk below must see turn off).
        #expect(!p.isTerminated)
        #expect(p.isConnected && p.servicesResolved)
        #expect(p.pairingState == PairingState(isPaired: true, isBonded: true, isTrusted: true))
        #expect(!p.services.isEmpty && characteristics.count == 3 && !descriptors.isEmpty)
        #expect(data.isNotifying && data.notificationTransport != nil && data.mtu != nil)

        // Subscribed before the ending: the bond state the peripheral reports going to none.
        let unbonded = Collector<PairingState>()
        p.whenPairingChanges().withFilter { !$0.isPaired }.onSuccess(context: .immediate) { unbonded.append($0) }

        switch ending {
        case .forget:
            try await p.forget().value
        case .terminate:
            p.terminate()
        case .removedByBluetoothd:
            try rig.simulator.sync { core in try core.removeDevice(adapter: 0, path: p.identifier) }
        case .bluetoothdRestart:
            try await rig.simulator.restart()
        case .adapterRemoved:
            rig.simulator.removeAdapter(0)
        }
        if !ending.terminates {
            // The device object's removal is what the peripheral reports: a disconnection, and
            // its bond state as none.
            _ = try await unbonded.wait(for: 1, timeout: .seconds(5))
            try await events.events.wait(for: 2, timeout: .seconds(5))
        }

        // MARK: The walk: Peripheral
        #expect(p.isTerminated == ending.terminates)
        #expect(!p.isConnected)
        #expect(!p.servicesResolved)
        #expect(p.pairingState == PairingState())
        #expect(!p.isPaired)
        #expect(!p.isBonded)
        #expect(!p.isTrusted)
        #expect(!p.isBlocked)
        #expect(p.services.isEmpty)
        #expect(p.service(AccelerometerUUIDs.service) == nil)
        // Records: who it is and what it last advertised and measured.
        #expect(p.address == tagAddress)
        #expect(p.name == "SensorTag")
        #expect(p.advertisement.serviceUUIDs.contains(AccelerometerUUIDs.service))
        #expect(p.rssi != nil)
        if ending.terminates {
            #expect(!rig.manager.peripherals.contains(p))
        }

        // MARK: The walk: Service
        #expect(service.characteristics.isEmpty)
        #expect(service.characteristic(AccelerometerUUIDs.data) == nil)
        #expect(service.uuid == AccelerometerUUIDs.service && service.isPrimary)

        // MARK: The walk: Characteristic
        for c in characteristics {
            #expect(!c.isNotifying, "\(c)")
            #expect(c.notificationTransport == nil, "\(c)")
            #expect(c.mtu == nil, "\(c)")
            #expect(c.descriptors.isEmpty, "\(c)")
            #expect(c.descriptor("2902") == nil, "\(c)")
            #expect(!c.properties.isEmpty, "\(c): the declaration is a record")
        }
        // The last value read or notified is a record, kept.
        #expect(data.value == Data([0, 0, 64]))
        #expect(data.notificationCounts.received >= 0)

        // MARK: The walk: Descriptor
        for d in descriptors { #expect(d.characteristic.descriptors.isEmpty, "\(d)") }
        #expect(ccc.value == cccValue, "the last value read is a record, kept")

        // MARK: Operations say why they cannot run
        let why: PeripheralError.Kind = ending.terminates ? .terminated : .notConnected
        let readError = await #expect(throws: PeripheralError.self) { _ = try await data.read(timeout: .seconds(2)).value }
        #expect(readError?.kind == why)
        let discoverError = await #expect(throws: PeripheralError.self) { _ = try await p.discoverServices(timeout: .seconds(2)).value }
        #expect(discoverError?.kind == why)
    }
}
