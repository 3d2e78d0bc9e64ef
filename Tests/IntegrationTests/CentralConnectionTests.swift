// ConnectionEvent semantics, each produced by its simulator fault. (Transient Connect errors:
// ReliabilityTests/ConnectReliabilityTests.)
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central connection events", .serialized, .timeLimit(.minutes(1)))
struct CentralConnectionTests {
    let tag = "C0:FF:EE:00:00:01"
    var device: String { "/org/bluez/hci0/dev_C0_FF_EE_00_00_01" }

    @Test("Connect never answered: .timeout, then .giveUp once timeouts exceed timeoutRetries; a reconnect then connects")
    func timeoutThenGiveUp() async throws {
        let h = try await CentralRig.start(manualClock: true)
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        h.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .noReply, count: 2))
        let events = h.connect(p, timeoutRetries: 1, connectionTimeout: .milliseconds(300))
        await h.advance(by: .milliseconds(300))
        try await events.events.wait(for: 1)
        #expect(events.events.items == [.timeout])
        p.reconnect()
        await h.advance(by: .milliseconds(300))
        try await events.events.wait(for: 2)
        #expect(events.events.items == [.timeout, .giveUp])
        p.reconnect(withDelay: .milliseconds(20))
        await h.advance(by: .milliseconds(19))
        #expect(events.events.items.count == 2 && !p.isConnected)
        h.clock?.advance(by: .milliseconds(1))
        try await events.events.wait(for: 3)
        #expect(events.events.items == [.timeout, .giveUp, .connect])
        #expect(p.isConnected)
    }

    @Test("a delayed Connect longer than connectionTimeout yields .timeout")
    func delayedConnect() async throws {
        let h = try await CentralRig.start(manualClock: true)
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        h.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .delay(.seconds(2)), count: 1))
        let events = h.connect(p, timeoutRetries: 3, connectionTimeout: .milliseconds(200))
        await h.advance(by: .milliseconds(200))
        try await events.events.wait(for: 1)
        #expect(events.events.items == [.timeout])
    }

    @Test("the link dropping yields .disconnect; reconnect connects; more drops than disconnectRetries yield .giveUp")
    func dropLink() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        let events = h.connect(p, disconnectRetries: 1)
        try await events.events.wait(for: 1)
        h.simulator.dropLink(device: device)
        try await events.events.wait(for: 2)
        #expect(events.events.items == [.connect, .disconnect])
        #expect(!p.isConnected)
        p.reconnect()
        try await events.events.wait(for: 3)
        h.simulator.dropLink(device: device)
        try await events.events.wait(for: 4)
        #expect(events.events.items == [.connect, .disconnect, .connect, .giveUp])
        p.terminate()
        #expect(!h.manager.peripherals.contains(p))
    }

    @Test("disconnect() yields .forceDisconnect once, and is idempotent")
    func forceDisconnect() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        let events = h.connect(p)
        try await events.events.wait(for: 1)
        p.disconnect()
        p.disconnect()
        try await events.events.wait(for: 2)
        #expect(events.events.items == [.connect, .forceDisconnect])
        // A further event would only come from a bug; the reconnect shows the stream is still live.
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items == [.connect, .forceDisconnect, .connect])
    }

    @Test("bluetoothd answers Connect before it signals Connected=true: at .connect the peripheral is connected")
    func connectedAtConnectEvent() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        let atConnect = Collector<Bool>()
        p.connect().onSuccess(context: .immediate) { e in
            if e.connectionEvent == .connect { atConnect.append(e.peripheral.isConnected) }
        }
        #expect(try await atConnect.wait(for: 1) == [true])
        _ = try await p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(5)).value
        let service = try #require(p.service(AccelerometerUUIDs.service))
        _ = try await service.discoverCharacteristics([AccelerometerUUIDs.data], timeout: .seconds(5)).value
    }

    @Test("the connection timer of an earlier connect() never cancels a later connect()'s attempt")
    func staleConnectionTimer() async throws {
        let h = try await CentralRig.start(manualClock: true)
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        let first = h.connect(p, connectionTimeout: .milliseconds(400))
        try await first.events.wait(for: 1)
        p.disconnect()
        try await first.events.wait(for: 2)
        // The second attempt is still pending (Connect answered 200 ms later, real time) when the
        // clock passes the first session's 400 ms deadline.
        h.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .delay(.milliseconds(200)), count: 1))
        let second = h.connect(p, connectionTimeout: .seconds(5))
        await h.advance(by: .milliseconds(400))
        #expect(second.events.items.isEmpty)
        try await second.events.wait(for: 1, timeout: .seconds(5))
        #expect(second.events.items == [.connect])
    }

    @Test("a permanent Connect error is pushed as a PeripheralError naming the call and BlueZ's error")
    func permanentFailure() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.discover(tag)
        h.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .error(.notAuthorized), count: 1))
        let stream = p.connect()
        let result = try await withDeadline(.seconds(5)) { () async -> PeripheralError? in
            do { for try await _ in stream.values {} } catch let e as PeripheralError { return e } catch {}
            return nil
        }
        let error = try #require(result)
        #expect(error.kind == .notAuthorized)
        #expect(error.bluez?.kind == .notAuthorized)
        #expect(error.operation.contains("org.bluez.Device1.Connect"))
        #expect(error.path == device)
    }

    @Test("twenty simulated devices connect at once and each reads its characteristic")
    func twentyDevices() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let addresses = (10..<30).map { "C0:FF:EE:00:01:\($0)" }
        // The simulated controller holds every link: a budget above the default's 5.
        h.session.connectionSlots.setBudget(addresses.count, for: nil)
        for a in addresses { h.simulator.add(simulatedSensorTag(a)) }
        let found = Collector<Peripheral>()
        h.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { found.append($0) }
        let peripherals = try await found.wait(for: 20)
        h.manager.stopScanning()
        #expect(Set(peripherals.map(\.address)) == Set(addresses))
        let connected = Collector<String>()
        for p in peripherals {
            p.connect().onSuccess(context: .immediate) { if $0.connectionEvent == .connect { connected.append($0.peripheral.address) } }
        }
        try await connected.wait(for: 20)
        let values = try await withDeadline(.seconds(10)) {
            try await withThrowingTaskGroup(of: UInt8?.self) { group in
                for p in peripherals {
                    group.addTask {
                        _ = try await p.discoverServices([AccelerometerUUIDs.service]).value
                        let c = try need(p.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.period))
                        return try await c.read().value.value(as: UInt8.self)
                    }
                }
                var out: [UInt8?] = []
                for try await v in group { out.append(v) }
                return out
            }
        }
        #expect(values.count == 20 && values.allSatisfy { $0 == 100 })
        #expect(h.manager.peripherals.filter(\.isConnected).count == 20)
    }
    @Test("connect, disconnect() at once, reconnect(): the cancelled attempt's brief link is not reported; one .connect, then the link stays")
    func cancelledAttemptThenReconnect() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        // A peripheral that links up within the Connect call: Connect, Disconnect (cancelling it)
        // and Connect again reach BlueZ back to back, so the first Connect brings the link up,
        // the Disconnect takes it down, the last brings it up (as a loaded bluetoothd may).
        h.simulator.add(simulatedSensorTag(tag).delays(connection: .zero, discovery: .milliseconds(2)))
        // The three calls are made inside the discovery callback, on the connection's thread:
        // no answer can be handled between them.
        let found = Collector<(Peripheral, ConnectionEvents)>()
        let tag = self.tag
        h.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { p in
            guard p.address == tag, found.items.isEmpty else { return }
            let events = h.connect(p)
            p.disconnect()
            p.reconnect()
            found.append((p, events))
        }
        let (p, events) = try await found.wait(for: 1)[0]
        h.manager.stopScanning()
        try await events.events.wait(for: 2)
        #expect(events.events.items == [.forceDisconnect, .connect])
        let service = try await h.services(of: p)
        _ = try await need(service.characteristic(AccelerometerUUIDs.period), "period").read().value
        #expect(p.isConnected)
        #expect(events.events.items == [.forceDisconnect, .connect], "the link flapped: \(events.failures.items)")
    }

    @Test("disconnect() then reconnect() at once: the reconnection waits for the link to go down, then connects")
    func reconnectRightAfterDisconnect() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (p, _, events) = try await h.ready(tag)
        p.disconnect()
        #expect(!p.isConnected, "isConnected after disconnect() was called")
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items == [.connect, .forceDisconnect, .connect])
        let service = try await h.services(of: p)
        _ = try await need(service.characteristic(AccelerometerUUIDs.period), "period").read().value
    }
}
