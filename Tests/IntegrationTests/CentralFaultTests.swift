// The ServicesResolved race, a missing service, no bluetoothd on the bus. (GATT timeouts:
// ReliabilityTests/TimeoutReliabilityTests; bluetoothd restarting: RestartReliabilityTests.)
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central faults", .serialized, .timeLimit(.minutes(1)))
struct CentralFaultTests {
    let tag = "C0:FF:EE:00:00:01"

    @Test("ServicesResolved published before the GATT objects: discovery waits for the objects")
    func servicesResolvedRace() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.setServicesResolvedEarly(.milliseconds(300))
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        let events = h.connect(p)
        try await events.events.wait(for: 1)
        _ = try await p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(3)).value
        #expect(p.servicesResolved)
        let service = try #require(p.service(AccelerometerUUIDs.service))
        _ = try await service.discoverCharacteristics([AccelerometerUUIDs.data, AccelerometerUUIDs.enabled, AccelerometerUUIDs.period]).value
        #expect(service.characteristics.count == 3)
        _ = try await service.characteristic(AccelerometerUUIDs.period)!.read().value
    }

    @Test("discovering a service the device lacks fails with notFound naming it")
    func missingService() async throws {
        let h = try await CentralRig.start(manualClock: true)
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (p, _, _) = try await h.ready(tag)
        let discovery = p.discoverServices(["180D"], timeout: .milliseconds(200))
        await h.advance(by: .milliseconds(200))
        do {
            _ = try await discovery.value
            Issue.record("discovery should fail")
        } catch let e as PeripheralError {
            #expect(e.kind == .notFound)
            #expect(e.message.contains("180D"))
        }
    }

    @Test("a manager whose bus has no bluetoothd is unsupported")
    func noBluetoothd() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let manager = CentralManager(session: bus.session())
        let states = Collector<ManagerState>()
        manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        #expect(try await states.wait(for: 1) == [.unsupported])
        do {
            for try await _ in manager.startScanning().values {}
            Issue.record("scan should fail")
        } catch let e as CentralManagerError {
            #expect(e == .notPoweredOn(.unsupported))
        }
    }

    @Test("adapter powered off: state poweredOff and the scan ends; powered on again: poweredOn")
    func poweredOff() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let states = Collector<ManagerState>()
        h.manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        let ended = Collector<String>()
        h.manager.startScanning().onFailure(context: .immediate) { ended.append("\($0)") }
        h.simulator.setPowered(adapter: 0, false)
        try await states.wait(for: 2)
        try await ended.wait(for: 1)
        #expect(!h.manager.isScanning)
        h.simulator.setPowered(adapter: 0, true)
        try await states.wait(for: 3)
        #expect(states.items == [.poweredOn, .poweredOff, .poweredOn])
    }
}
