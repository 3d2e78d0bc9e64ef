// Connect under transient BlueZ errors: one device, many devices at once, repeated cycles, an
// error that never clears. Every backoff runs on the rig's manual clock.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Reliability: connecting", .serialized, .timeLimit(.minutes(1)))
struct ConnectReliabilityTests {
    @Test("InProgress and le-connection-abort-by-local from Connect are retried before surfacing")
    func singleDeviceTransientRetries() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let a = addresses(1)[0]
        rig.simulator.add(simulatedSensorTag(a))
        let p = try await rig.discover(a)
        rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .error(.inProgress), count: 2))
        rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .error(.failed("le-connection-abort-by-local")), count: 1))
        let events = rig.connect(p)
        // Each error arms a backoff (100, 200, 400 ms) beside the attempt's timer; each retry
        // happens only when the clock passes its backoff.
        for backoff in [100, 200, 400] {
            await rig.advance(by: .milliseconds(backoff - 1), once: 2)
            #expect(events.events.items.isEmpty)
            rig.clock?.advance(by: .milliseconds(1))
        }
        try await events.events.wait(for: 1)
        #expect(events.events.items == [.connect])
        #expect(events.failures.items.isEmpty)
    }

    @Test("ten devices connecting at once through InProgress and le-connection-abort-by-local all connect, no failure surfaces")
    func transientErrorsUnderLoad() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let wanted = addresses(10)
        // The simulated controller holds every link: a budget above the default's 5.
        rig.session.connectionSlots.setBudget(wanted.count, for: nil)
        for a in wanted { rig.simulator.add(simulatedSensorTag(a)) }
        let peripherals = try await rig.discover(wanted)
        // Every device's first Connect gets InProgress, its second le-connection-abort-by-local.
        rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .error(.inProgress), count: 10))
        rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .error(.failed("le-connection-abort-by-local")), count: 10))
        let all = peripherals.map { rig.connect($0) }
        // Ten attempt timers, and ten backoffs once every first Connect has failed: 100 ms
        // moves every device to its second Connect; 200 ms more to its third.
        await rig.advance(by: .milliseconds(100), once: 20)
        await rig.advance(by: .milliseconds(200), once: 20)
        for (p, e) in zip(peripherals, all) {
            try await e.events.wait(for: 1, timeout: .seconds(10))
            #expect(e.events.items == [.connect], "\(p.address)")
            #expect(e.failures.items.isEmpty, "\(p.address): \(e.failures.items)")
        }
        #expect(rig.manager.peripherals.filter(\.isConnected).count == 10)
    }

    @Test("twenty connect/disconnect cycles with a transient error on every Connect: each cycle is .connect then .forceDisconnect")
    func repeatedCyclesWithTransientErrors() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let a = addresses(1)[0]
        rig.simulator.add(simulatedSensorTag(a))
        let p = try await rig.discover(a)
        let events = rig.connect(p)
        let cycles = 20
        for i in 0..<cycles {
            if i > 0 {
                let fault: BlueZErrorReply = i.isMultiple(of: 2) ? .inProgress : .failed("le-connection-abort-by-local")
                rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .error(fault), count: 1))
                p.reconnect()
                // The attempt's timer and the error's 100 ms backoff.
                await rig.advance(by: .milliseconds(100), once: 2)
            }
            try await events.events.wait(for: 2 * i + 1)
            #expect(p.isConnected)
            p.disconnect()
            try await events.events.wait(for: 2 * i + 2)
        }
        let expected = Array(repeating: [ConnectionEvent.connect, .forceDisconnect], count: cycles).flatMap { $0 }
        #expect(events.events.items == expected)
        #expect(events.failures.items.isEmpty)
    }

    @Test("a transient error that never clears surfaces as a failure after the retry budget, not a hang")
    func persistentTransientErrorSurfaces() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let a = addresses(1)[0]
        rig.simulator.add(simulatedSensorTag(a))
        let p = try await rig.discover(a)
        rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .error(.inProgress)))
        let events = rig.connect(p, connectionTimeout: .seconds(3))
        // Four retries after 100, 200, 400 and 800 ms of backoff; the fifth InProgress is
        // pushed as a failure, 1.5 s into the attempt, before its 3 s timeout.
        for backoff in [100, 200, 400, 800] {
            #expect(events.failures.items.isEmpty)
            await rig.advance(by: .milliseconds(backoff), once: 2)
        }
        let failures = try await events.failures.wait(for: 1)
        #expect(rig.clock?.now == .milliseconds(1500))
        #expect(failures.count == 1 && failures[0].lowercased().contains("inprogress"), "\(failures)")
        #expect(events.events.items.isEmpty)
        #expect(!p.isConnected)
        // Counted before the reconnect: its `.connect` may arrive before the next line runs.
        let base = events.events.items.count
        rig.simulator.clearFaults()
        p.reconnect()
        try await events.events.wait(for: base + 1)
        #expect(events.events.items.last == .connect)
    }
}
