// The two managers read the same: the state conveniences, the adapter in use, reset and
// shutdown, spelled alike on CentralManager and PeripheralManager, each through the public API.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// What both managers offer, by the same names (one value per role, so one test runs for both).
struct ManagerFace: Sendable, CustomTestStringConvertible {
    let role: String
    let state: @Sendable () -> ManagerState
    let whenStateChanges: @Sendable () -> FutureStream<ManagerState>
    let whenPoweredOn: @Sendable (Duration) -> Future<Void>
    let adapter: @Sendable () -> String?
    let whenAdapterChanges: @Sendable () -> FutureStream<String?>
    let reset: @Sendable () -> Void
    let shutdown: @Sendable () -> Future<Void>
    var testDescription: String { role }

    static func central(_ m: CentralManager) -> ManagerFace {
        ManagerFace(role: "CentralManager", state: { m.state }, whenStateChanges: { m.whenStateChanges() },
                    whenPoweredOn: { m.whenPoweredOn(timeout: $0) }, adapter: { m.adapter },
                    whenAdapterChanges: { m.whenAdapterChanges() }, reset: { m.reset() }, shutdown: { m.shutdown() })
    }

    static func peripheral(_ m: PeripheralManager) -> ManagerFace {
        ManagerFace(role: "PeripheralManager", state: { m.state }, whenStateChanges: { m.whenStateChanges() },
                    whenPoweredOn: { m.whenPoweredOn(timeout: $0) }, adapter: { m.adapter },
                    whenAdapterChanges: { m.whenAdapterChanges() }, reset: { m.reset() }, shutdown: { m.shutdown() })
    }
}

@Suite("The two managers read the same", .timeLimit(.minutes(1)))
struct ManagerParityTests {
    @Test("whenPoweredOn, whenStateChanges (latest state first), adapter and whenAdapterChanges, reset and shutdown behave alike in both roles",
          arguments: ["central", "peripheral"])
    func bothRolesReadTheSame(_ role: String) async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        let central = CentralManager(session: h.session)
        let peripheral = PeripheralManager(session: h.session)
        let m = role == "central" ? ManagerFace.central(central) : ManagerFace.peripheral(peripheral)

        try await m.whenPoweredOn(.seconds(5)).value
        #expect(m.state() == .poweredOn)
        #expect(m.adapter() == "hci0")
        #expect(try await m.whenAdapterChanges().first().value == "hci0")

        // Powered off: a new subscriber gets the state now first, not one that is over.
        let off = m.whenStateChanges().withFilter { $0 == .poweredOff }.first()
        h.simulator.setPowered(adapter: 0, false)
        _ = try await off.value
        #expect(try await m.whenStateChanges().first().value == .poweredOff, "\(m.role)")
        let late = await #expect(throws: BlueCapError.self) { try await m.whenPoweredOn(.milliseconds(200)).value }
        #expect(late?.kind == .notPoweredOn)
        #expect(late?.message.contains("poweredOff") == true, "\(String(describing: late))")

        // Waiting through the power-off: completes once it is back.
        let back = m.whenPoweredOn(.seconds(5))
        h.simulator.setPowered(adapter: 0, true)
        try await back.value
        #expect(try await m.whenStateChanges().first().value == .poweredOn)

        // The adapter in use goes away: the manager moves to hci1 and says so.
        let moved = m.whenAdapterChanges().withFilter { $0 == "hci1" }.first()
        h.simulator.removeAdapter(0)
        #expect(try await moved.value == "hci1")
        try await m.whenPoweredOn(.seconds(5)).value
        #expect(m.adapter() == "hci1")

        // reset and shutdown end the manager's work; the state stream goes on.
        m.reset()
        try await m.shutdown().value
        #expect(m.state() == .poweredOn)
        try await m.whenPoweredOn(.seconds(1)).value
    }

    @Test("CentralManager.shutdown disconnects and terminates its peripherals and completes once bluetoothd answered; PeripheralManager.shutdown removes services and advertisement")
    func shutdownEndsEachRolesWork() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(simulatedSensorTag("C0:FF:EE:00:34:11"))
        let (p, _, events) = try await rig.ready("C0:FF:EE:00:34:11")
        try await rig.manager.shutdown(timeout: .seconds(5)).value
        #expect(p.isTerminated && !p.isConnected)
        #expect(rig.manager.peripherals.isEmpty && !rig.manager.isScanning)
        // bluetoothd took the link down before shutdown completed (it sets ServicesResolved
        // false before answering Disconnect; Connected follows later, as on real bluetoothd).
        let resolved = rig.simulator.sync { $0.store.property(p.identifier, "org.bluez.Device1", "ServicesResolved") }
        #expect(resolved == .bool(false))
        #expect(events.events.items.first == .connect)

        let pm = PeripheralManager(session: rig.session)
        try await pm.whenPoweredOn(timeout: .seconds(5)).value
        let service = MutableService(uuid: BLEUUID("B1E0C0DE-0000-4000-8000-00000000D334"), characteristics: [])
        try await pm.add(service).value
        try await pm.startAdvertising("parity", uuids: [service.uuid]).value
        #expect(pm.isAdvertising && pm.services.count == 1)
        try await pm.shutdown().value
        #expect(!pm.isAdvertising && pm.services.isEmpty)
        #expect(pm.state == .poweredOn)
    }
}
