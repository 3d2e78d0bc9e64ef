// bluetoothd restarting mid-read, mid-stream and mid-scan; adapters powered off and removed
// mid-connection; scans stopped behind our back, repeatedly.
// (CentralScanTests.watchdog covers one silent stop, CentralFaultTests.poweredOff power off while
// scanning.)
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Reliability: bluetoothd restarts, adapters, scan watchdog", .serialized, .timeLimit(.minutes(1)))
struct RestartReliabilityTests {
    @Test("bluetoothd restarting mid-connection: pending operations fail fast, state goes resetting then poweredOn")
    func bluetoothdRestart() async throws {
        // On the manual clock, never advanced: the calls' 20 s deadlines cannot be what ends them.
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let tag = addresses(1)[0]
        let states = Collector<ManagerState>()
        rig.manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        try await states.wait(for: 1)
        rig.simulator.add(simulatedSensorTag(tag))
        let (p, service, events) = try await rig.ready(tag, disconnectRetries: 5)
        let enabled = try #require(service.characteristic(AccelerometerUUIDs.enabled))
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        // One call parked in bluetoothd, one waiting on the object tree (a service that never comes).
        let pending = enabled.read(timeout: .seconds(20))
        let waiting = p.discoverServices(["180D"], timeout: .seconds(20))
        try await rig.simulator.restart()
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
        #expect(rig.clock?.now == .zero)
        try await events.events.wait(for: 2)
        #expect(events.events.items == [.connect, .disconnect])
        try await states.wait(for: 3)
        #expect(states.items == [.poweredOn, .resetting, .poweredOn])
        #expect(rig.manager.state == .poweredOn)
        // After the restart the device is found and connected again.
        rig.simulator.add(simulatedSensorTag(tag))
        let again = try await rig.discover(tag)
        #expect(again === p)
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items.last == .connect)
    }

    @Test("restart mid-read, mid-notification-stream and mid-scan at once: everything ends fast, then works again")
    func restartMidEverything() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        // On the manual clock, never advanced: no deadline can be what ends the calls.
        let a = addresses(2)
        for x in a { rig.simulator.add(simulatedSensorTag(x)) }
        let (p, service, events) = try await rig.ready(a[0], disconnectRetries: 5)
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let received = Collector<Int>()
        data.receiveNotificationUpdates(capacity: 1_000).onSuccess(context: .immediate) { _ in received.append(1) }
        _ = try await data.startNotifying().value
        _ = await rig.simulator.burst(peripheral: a[0], characteristic: AccelerometerUUIDs.data.uuidString, count: 500)
        try await received.wait(for: 500)
        // A scan running, a read parked in bluetoothd.
        let scanEnded = Collector<String>()
        rig.manager.startScanning().onFailure(context: .immediate) { scanEnded.append("\($0)") }
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        let read = period.read(timeout: .seconds(30))
        try await rig.simulator.restart()
        let readError = try #require(try await failure(of: read, within: promptly) as? PeripheralError)
        #expect([.serviceUnavailable, .disconnected].contains(readError.kind) || readError.bluez?.kind == readError.kind, "\(readError)")
        try await scanEnded.wait(for: 1, timeout: promptly)
        #expect(!rig.manager.isScanning)
        try await events.events.wait(for: 2, timeout: promptly)
        #expect(rig.clock?.now == .zero)
        #expect(!data.isNotifying)
        try await rig.manager.whenPoweredOn(timeout: .seconds(5)).value
        // The world comes back: scan, reconnect, notifications re-subscribed by themselves.
        rig.simulator.clearFaults()
        for x in a { rig.simulator.add(simulatedSensorTag(x)) }
        let again = try await rig.discover(a)
        #expect(again[0] === p)
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items == [.connect, .disconnect, .connect])
        try await waitUntil("notifying after restart") { data.isNotifying }
        let before = received.items.count
        _ = await rig.simulator.burst(peripheral: a[0], characteristic: AccelerometerUUIDs.data.uuidString, count: 100)
        try await received.wait(for: before + 100)
        #expect(try await period.read().value.value(as: UInt8.self) == 100)
    }

    @Test("three restarts in a row while ten devices are connected: each one resets and comes back, no stuck peripheral")
    func repeatedRestarts() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let states = Collector<ManagerState>()
        rig.manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        let wanted = addresses(10)
        // The simulated controller holds every link: a budget above the default's 5.
        rig.session.connectionSlots.setBudget(wanted.count, for: nil)
        for round in 0..<3 {
            for x in wanted { rig.simulator.add(simulatedSensorTag(x)) }
            let peripherals = try await rig.discover(wanted)
            let all = peripherals.map { p -> ConnectionEvents in
                if round == 0 { return rig.connect(p, disconnectRetries: 10) }
                let e = ConnectionEvents()
                p.connect(disconnectRetries: 10).onSuccess(context: .immediate) { e.events.append($0.connectionEvent) }
                return e
            }
            for e in all { try await e.events.wait(for: 1) }
            #expect(peripherals.allSatisfy { $0.isConnected })
            try await rig.simulator.restart()
            for e in all { try await e.events.wait(for: 2, timeout: promptly) }
            #expect(peripherals.allSatisfy { !$0.isConnected })
            // The restart must have been seen (resetting) before waiting for poweredOn again.
            try await waitUntil("reset \(round + 1) seen") { states.items.filter { $0 == .resetting }.count == round + 1 }
            try await rig.manager.whenPoweredOn(timeout: .seconds(5)).value
        }
        try await waitUntil("3 resets seen") { states.items.filter { $0 == .resetting }.count == 3 }
        #expect(rig.manager.state == .poweredOn)
    }

    @Test("adapter powered off mid-connection with a read parked: the read fails at once, .disconnect, state poweredOff")
    func poweredOffMidConnection() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (_, p, service, events) = try await rig.readyTag(disconnectRetries: 3)
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        let read = period.read(timeout: .seconds(30))
        let queued = period.read(timeout: .seconds(30))
        rig.simulator.setPowered(adapter: 0, false)
        for f in [read, queued] {
            // Failed by the link drop, or answered by bluetoothd as its objects go: at once, not at the deadline.
            let e = try #require(try await failure(of: f, within: promptly) as? PeripheralError)
            #expect([.disconnected, .notConnected].contains(e.kind) || e.bluez?.kind == .unknownObject, "\(e)")
        }
        try await events.events.wait(for: 2, timeout: promptly)
        #expect(events.events.items == [.connect, .disconnect])
        try await waitUntil("poweredOff") { rig.manager.state == .poweredOff }
        // Operations while off fail at once; power back on and reconnect.
        #expect((try await failure(of: period.read()) as? PeripheralError)?.kind == .notConnected)
        rig.simulator.clearFaults()
        rig.simulator.setPowered(adapter: 0, true)
        try await rig.manager.whenPoweredOn(timeout: .seconds(5)).value
        p.reconnect()
        try await events.events.wait(for: 3)
        _ = try await rig.services(of: p)
        #expect(try await period.read().value.value(as: UInt8.self) == 100)
    }

    @Test("adapter removed mid-connection: pending operations fail fast, the peripheral disconnects, state leaves poweredOn")
    func adapterRemovedMidConnection() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        // On the manual clock, never advanced: no deadline can be what ends the calls.
        let (_, _, service, events) = try await rig.readyTag(disconnectRetries: 3)
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        let read = period.read(timeout: .seconds(30))
        rig.simulator.removeAdapter(0)
        let e = try #require(try await failure(of: read, within: promptly) as? PeripheralError)
        #expect([.disconnected, .notConnected, .serviceUnavailable].contains(e.kind) || e.bluez?.kind == .unknownObject, "\(e)")
        try await events.events.wait(for: 2, timeout: promptly)
        #expect(rig.clock?.now == .zero)
        try await waitUntil("state leaves poweredOn") { rig.manager.state != .poweredOn }
        // A new adapter appears: the manager picks it up.
        rig.simulator.addAdapter()
        try await rig.manager.whenPoweredOn(timeout: .seconds(5)).value
    }

    @Test("BlueZ stops discovery behind our back five times during an RSSI storm: the watchdog restarts it every time")
    func watchdogRepeated() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let found = Collector<String>()
        rig.manager.startScanning().onSuccess(context: .immediate) { found.append($0.address) }
        rig.simulator.startRSSIStorm(devices: 50, hz: 20)
        defer { rig.simulator.stopRSSIStorm() }
        let me = rig.client.uniqueName
        let fresh = addresses(5, block: 1)
        for (i, x) in fresh.enumerated() {
            rig.simulator.sync { core in try? core.stopDiscovery(adapter: 0, sender: me) }
            // Only reported if discovery was started again.
            rig.simulator.add(simulatedSensorTag(x))
            try await waitUntil("device \(i) found after stop \(i + 1)") { found.items.contains(x) }
        }
        #expect(rig.manager.isScanning)
        #expect(rig.simulator.sync { $0.discoveryClients(adapter: 0)[me]?.active } == true)
    }

    @Test("discovery that keeps stopping ends the scan with an error after the restart limit instead of stalling")
    func watchdogGivesUp() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let ended = Collector<String>()
        rig.manager.startScanning().onFailure(context: .immediate) { ended.append("\($0)") }
        let me = rig.client.uniqueName
        try await waitUntil("discovering") { rig.simulator.sync { $0.discoveryClients(adapter: 0)[me]?.active } == true }
        for _ in 0..<40 where ended.items.isEmpty {
            try await waitUntil("discovering again") {
                !ended.items.isEmpty || rig.simulator.sync { $0.discoveryClients(adapter: 0)[me]?.active } == true
            }
            rig.simulator.sync { core in try? core.stopDiscovery(adapter: 0, sender: me) }
        }
        try await ended.wait(for: 1, timeout: .seconds(5))
        #expect(ended.items[0].contains("discovery stopped"))
        #expect(!rig.manager.isScanning)
    }
}
