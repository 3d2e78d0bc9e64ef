// Operation deadlines end with their operations: a completed discovery, a failed discovery and a
// satisfied whenPoweredOn() release what they captured at once, not when their timer would fire.
// (Without that, 1,000 soak cycles kept every cycle's futures until its deadline: RSS grew.)
import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Reliability: operation deadlines are cancelled on completion", .serialized, .timeLimit(.minutes(1)))
struct DeadlineReleaseTests {
    /// On the rig's manual clock, never advanced: the deadline cannot be what released anything.
    static let deadline: Duration = .seconds(60)

    @Test("a discovery that had to wait releases its future as soon as it succeeds, long before its deadline")
    func succeededDiscoveryReleased() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let a = addresses(1)[0]
        // ServicesResolved at once, the GATT objects a second later: discovery has to wait.
        rig.simulator.setServicesResolvedEarly(.seconds(1))
        rig.simulator.add(simulatedSensorTag(a))
        let p = try await rig.discover(a)
        let events = rig.connect(p)
        try await events.events.wait(for: 1)
        let released = try await { () async throws -> WeakReference<Future<Peripheral>> in
            let services = p.discoverServices([AccelerometerUUIDs.service], timeout: Self.deadline)
            try #require(!services.isCompleted, "the discovery must wait for the GATT objects")
            _ = try await withDeadline(promptly, "discovery") { try await services.value }
            return WeakReference(services)
        }()
        try await waitUntil("discoverServices future released", timeout: promptly) { released.isReleased }
        // Its deadline was unscheduled with it (the clock, never advanced, has nothing left).
        #expect(rig.clock?.pendingCount == 0 && rig.clock?.now == .zero)
    }

    @Test("a discovery failed by the link drop releases its future at once, long before its deadline")
    func failedDiscoveryReleased() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let (_, p, _, events) = try await rig.readyTag()
        let released = try await { () async throws -> WeakReference<Future<Peripheral>> in
            // A service the device does not have: the wait stays pending until the link drops.
            let waiting = p.discoverServices(["180D"], timeout: Self.deadline)
            try #require(!waiting.isCompleted)
            rig.simulator.dropLink(device: p.identifier)
            let error = try #require(try await failure(of: waiting, within: promptly) as? PeripheralError)
            #expect(error.kind == .disconnected, "\(error)")
            return WeakReference(waiting)
        }()
        try await events.events.wait(for: 2)
        try await waitUntil("failed discovery future released", timeout: promptly) { released.isReleased }
        // Its deadline was unscheduled with it (the clock, never advanced, has nothing left).
        #expect(rig.clock?.pendingCount == 0 && rig.clock?.now == .zero)
    }

    @Test("whenPoweredOn() that waited for power releases its future once powered on, long before its deadline")
    func whenPoweredOnReleased() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        rig.simulator.setPowered(adapter: 0, false)
        try await waitUntil("poweredOff") { rig.manager.state == .poweredOff }
        let released = try await { () async throws -> WeakReference<Future<Void>> in
            let poweredOn = rig.manager.whenPoweredOn(timeout: Self.deadline)
            try #require(!poweredOn.isCompleted)
            rig.simulator.setPowered(adapter: 0, true)
            try await withDeadline(promptly, "powered on") { try await poweredOn.value }
            return WeakReference(poweredOn)
        }()
        try await waitUntil("whenPoweredOn future released", timeout: promptly) { released.isReleased }
        // Its deadline was unscheduled with it (the clock, never advanced, has nothing left).
        #expect(rig.clock?.pendingCount == 0 && rig.clock?.now == .zero)
    }
}
