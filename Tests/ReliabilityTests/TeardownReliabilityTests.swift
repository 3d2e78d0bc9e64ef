// Teardown with calls pending never blocks; teardown from inside callbacks; concurrent use.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Locking
import Testing
import TestSupport

@Suite("Reliability: teardown and thread safety", .serialized, .timeLimit(.minutes(1)))
struct TeardownReliabilityTests {
    @Test("terminate() with a parked read, queued writes, a discovery wait and a pending connect returns at once and fails them all")
    func terminateWithPendingCalls() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        // On the manual clock, never advanced: no deadline can be what ends the calls.
        let a = addresses(2)
        for x in a { rig.simulator.add(simulatedSensorTag(x)) }
        let (p, service, _) = try await rig.ready(a[0])
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        let updatesEnded = Collector<String>()
        data.receiveNotificationUpdates().onFailure(context: .immediate) { updatesEnded.append("\($0)") }
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .noReply))
        let pending: [Future<Void>] = [
            period.read(timeout: .seconds(30)).map(context: .immediate) { _ in },
            period.write(data: Data([1]), timeout: .seconds(30)).map(context: .immediate) { _ in },
            data.startNotifying(timeout: .seconds(30)).map(context: .immediate) { _ in },
            p.discoverServices(["180D"], timeout: .seconds(30)).map(context: .immediate) { _ in },
        ]
        let other = try await rig.discover(a[1])
        let connecting = rig.connect(other, connectionTimeout: .seconds(30))
        let clock = ContinuousClock()
        let start = clock.now
        p.terminate()
        other.terminate()
        #expect(clock.now - start < .seconds(1), "terminate took \(clock.now - start)")
        for f in pending {
            let e = try #require(try await failure(of: f, within: promptly) as? PeripheralError)
            #expect([.terminated, .disconnected, .notConnected].contains(e.kind), "\(e)")
        }
        #expect(rig.clock?.now == .zero)
        #expect(!rig.manager.peripherals.contains(p) && !rig.manager.peripherals.contains(other))
        #expect(connecting.events.items.allSatisfy { $0 != .connect })
        p.terminate()  // idempotent
    }

    @Test("closing the client connection with calls pending fails them at once; reset() afterwards does not block")
    func closeConnectionWithPendingCalls() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        // On the manual clock, never advanced: no deadline can be what ends the calls.
        let (_, _, service, _) = try await rig.readyTag()
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        let reads = (0..<5).map { _ in period.read(timeout: .seconds(30)) }
        rig.client.close()
        for r in reads {
            let e = try #require(try await failure(of: r, within: promptly) as? PeripheralError)
            // The D-Bus connection itself is gone: .disconnected, and BlueZ's error kind says why.
            #expect(e.kind == .disconnected && e.bluez?.kind == .disconnected, "\(e)")
        }
        rig.manager.reset()
        #expect(rig.clock?.now == .zero)
        // Calls after reset() fail at once, as the documentation says: the peripheral is terminated.
        let late = try #require(try await failure(of: period.read(timeout: .seconds(30)), within: promptly) as? PeripheralError)
        #expect(late.kind == .terminated, "\(late)")
    }

    @Test("terminate, reset and close called from inside notification and connection callbacks do not deadlock")
    func teardownFromCallbacks() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let a = addresses(3)
        for x in a { rig.simulator.add(simulatedSensorTag(x)) }
        let peripherals = try await rig.discover(a)
        // 1: terminate from the notification callback (socket queue, immediate context).
        let events0 = rig.connect(peripherals[0])
        try await events0.events.wait(for: 1)
        let s0 = try await rig.services(of: peripherals[0])
        let data0 = try need(s0.characteristic(AccelerometerUUIDs.data), "data")
        let done = Collector<String>()
        data0.receiveNotificationUpdates().onSuccess(context: .immediate) { _ in
            peripherals[0].terminate()
            done.append("terminated in notification")
        }
        _ = try await data0.startNotifying().value
        rig.simulator.notify(peripheral: a[0], characteristic: AccelerometerUUIDs.data.uuidString, value: Data([1]))
        try await done.wait(for: 1, timeout: promptly)
        // 2: disconnect + terminate from the connection-event callback (owner thread).
        peripherals[1].connect().onSuccess(context: .immediate) { e in
            guard e.connectionEvent == .connect else { return }
            e.peripheral.disconnect()
            e.peripheral.terminate()
            done.append("terminated in connect event")
        }
        try await done.wait(for: 2, timeout: promptly)
        // 3: reset() and close() from a read completion on the default context.
        let events2 = rig.connect(peripherals[2])
        try await events2.events.wait(for: 1)
        let s2 = try await rig.services(of: peripherals[2])
        let client = rig.client, manager = rig.manager
        try need(s2.characteristic(AccelerometerUUIDs.period), "period").read().onComplete(context: .immediate) { _ in
            manager.reset()
            client.close()
            done.append("reset and closed in read completion")
        }
        try await done.wait(for: 3, timeout: promptly)
        #expect(done.items.count == 3)
    }

    @Test("eight tasks hammering one peripheral (read, write, notify on/off, disconnect, reconnect) for 400 operations: all complete")
    func concurrentUse() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (a, p, service, _) = try await rig.readyTag(disconnectRetries: 1_000)
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        // Every operation slower than a second, for the failure message: a stall names its cause.
        let slow = Collector<String>()
        let inFlight = Locked([Int: String]())  // worker: what it is doing now
        let opClock = ContinuousClock()
        let completed = try await withDeadline(.seconds(40), "400 operations", diagnostics: { "slow operations: \(slow.items); in flight: \(inFlight.withLock { $0 })" }) {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var n = 0
                        for i in 0..<50 {
                            let f: Future<Void>
                            inFlight.withLock { $0[worker] = "op \(i) kind \((worker + i) % 8): starting" }
                            switch (worker + i) % 8 {
                            case 0: f = period.read(timeout: .seconds(5)).map(context: .immediate) { _ in }
                            case 1: f = period.write(data: Data([UInt8(i)]), timeout: .seconds(5)).map(context: .immediate) { _ in }
                            case 2: f = data.startNotifying(timeout: .seconds(5)).map(context: .immediate) { _ in }
                            case 3: f = data.stopNotifying(timeout: .seconds(5)).map(context: .immediate) { _ in }
                            case 4:
                                if i % 10 == 4 { p.disconnect() }
                                f = p.discoverServices(timeout: .seconds(5)).map(context: .immediate) { _ in }
                            case 5:
                                p.reconnect()
                                f = period.read(timeout: .seconds(5)).map(context: .immediate) { _ in }
                            case 6:
                                _ = p.services.flatMap(\.characteristics).map(\.value)
                                f = data.read(timeout: .seconds(5)).map(context: .immediate) { _ in }
                            default:
                                rig.simulator.notify(peripheral: a, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([UInt8(i)]))
                                f = period.read(timeout: .seconds(5)).map(context: .immediate) { _ in }
                            }
                            let began = opClock.now
                            inFlight.withLock { $0[worker] = "op \(i) kind \((worker + i) % 8): awaiting since \(began)" }
                            let outcome: String
                            do { _ = try await f.value; outcome = "ok" } catch { outcome = "\(error)" }  // both complete
                            let took = opClock.now - began
                            if took > .seconds(1) { slow.append("worker \(worker) op \(i) kind \((worker + i) % 8): \(took): \(outcome)") }
                            n += 1
                        }
                        return n
                    }
                }
                var total = 0
                for try await n in group { total += n }
                return total
            }
        }
        #expect(completed == 400)
        // Still usable afterwards. A worker's last disconnect() may still be on its way down:
        // let the link settle down first, so that the reconnection is not that drop's victim.
        p.disconnect()
        try await waitUntil("disconnected", timeout: .seconds(5)) { !p.isConnected }
        p.reconnect()
        try await waitUntil("connected again", timeout: .seconds(5)) { p.isConnected }
        _ = try await p.discoverServices([AccelerometerUUIDs.service]).value
        _ = try await period.read().value
    }
}
