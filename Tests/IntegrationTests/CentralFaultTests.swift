// GATT timeouts, the ServicesResolved race, bluetoothd restarting, the discovery watchdog.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central faults", .serialized, .timeLimit(.minutes(1)))
struct CentralFaultTests {
    let tag = "C0:FF:EE:00:00:01"

    @Test("read, write and startNotifying time out when BlueZ never answers; the queue goes on")
    func gattTimeouts() async throws {
        let h = try await CentralHarness.start(manualClock: true)
        defer { h.stop() }
        h.simulator.add(sensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let enabled = try #require(service.characteristic(accelerometerEnabled))
        let data = try #require(service.characteristic(accelerometerData))
        h.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply, count: 1))
        h.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.WriteValue", action: .noReply, count: 1))
        h.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.AcquireNotify", action: .noReply, count: 1))
        // Queued behind one another: each times out in turn, then the last read succeeds.
        let read = enabled.read(timeout: .milliseconds(200))
        let write = enabled.write(data: Data([1]), timeout: .milliseconds(200))
        let notify = data.startNotifying(timeout: .milliseconds(200))
        let readAgain = enabled.read(timeout: .seconds(2))
        for (future, call) in [(read, "ReadValue"), (write, "WriteValue"), (notify, "AcquireNotify")] {
            #expect(!future.isCompleted, "\(call) ended before its deadline")
            await h.advance(by: .milliseconds(200))
            do {
                _ = try await future.value
                Issue.record("\(call) should have timed out")
            } catch let e as PeripheralError {
                #expect(e.kind == .timeout)
                #expect(e.timeout == .milliseconds(200))
                #expect(e.path?.hasSuffix("char0") == false)
                #expect(e.bluez?.kind == .timeout)
            }
        }
        _ = try await readAgain.value
        #expect(enabled.value == Data([0]))
        #expect(!data.isNotifying)
    }

    @Test("ServicesResolved published before the GATT objects: discovery waits for the objects")
    func servicesResolvedRace() async throws {
        let h = try await CentralHarness.start()
        defer { h.stop() }
        h.simulator.setServicesResolvedEarly(.milliseconds(300))
        h.simulator.add(sensorTag(tag))
        let p = try await h.discover(tag)
        let events = h.connect(p)
        try await events.events.wait(for: 1)
        _ = try await p.discoverServices([accelerometerService], timeout: .seconds(3)).value
        #expect(p.servicesResolved)
        let service = try #require(p.service(accelerometerService))
        _ = try await service.discoverCharacteristics([accelerometerData, accelerometerEnabled, accelerometerPeriod]).value
        #expect(service.characteristics.count == 3)
        _ = try await service.characteristic(accelerometerPeriod)!.read().value
    }

    @Test("discovering a service the device lacks fails with notFound naming it")
    func missingService() async throws {
        let h = try await CentralHarness.start(manualClock: true)
        defer { h.stop() }
        h.simulator.add(sensorTag(tag))
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

    @Test("bluetoothd restarting mid-connection: pending operations fail fast, state goes resetting then poweredOn")
    func bluetoothdRestart() async throws {
        // On the manual clock, never advanced: the calls' 20 s deadlines cannot be what ends them.
        let h = try await CentralHarness.start(manualClock: true)
        defer { h.stop() }
        let states = Collector<ManagerState>()
        h.manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        try await states.wait(for: 1)
        h.simulator.add(sensorTag(tag))
        let (p, service, events) = try await h.ready(tag, disconnectRetries: 5)
        let enabled = try #require(service.characteristic(accelerometerEnabled))
        h.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        // One call parked in bluetoothd, one waiting on the object tree (a service that never comes).
        let pending = enabled.read(timeout: .seconds(20))
        let waiting = p.discoverServices(["180D"], timeout: .seconds(20))
        try await h.simulator.restart()
        do {
            _ = try await pending.value
            Issue.record("read should fail")
        } catch let e as PeripheralError {
            // The parked call is answered by whoever ends it first (see the report on the simulator);
            // either way it fails at once, not after its 20 s timeout.
            #expect([.serviceUnavailable, .disconnected].contains(e.kind) || e.bluez?.kind == e.kind, "\(e)")
        }
        do {
            _ = try await waiting.value
            Issue.record("discovery should fail")
        } catch let e as PeripheralError {
            #expect(e.kind == .serviceUnavailable)
        }
        #expect(h.clock?.now == .zero)
        try await events.events.wait(for: 2)
        #expect(events.events.items == [.connect, .disconnect])
        try await states.wait(for: 3)
        #expect(states.items == [.poweredOn, .resetting, .poweredOn])
        #expect(h.manager.state == .poweredOn)
        // After the restart the device is found and connected again.
        h.simulator.add(sensorTag(tag))
        let again = try await h.discover(tag)
        #expect(again === p)
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items.last == .connect)
    }

    @Test("a manager whose bus has no bluetoothd is unsupported")
    func noBluetoothd() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let manager = CentralManager(connection: try bus.connect())
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
        let h = try await CentralHarness.start()
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
