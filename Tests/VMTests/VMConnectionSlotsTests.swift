// Real BlueZ: the session's connection slots. Four controllers (test-vm's `vm-adapters` step):
// peripherals on hci1 and hci3, centrals on hci0 and hci2. With a budget of 1 on hci0 the second
// connect waits until the first disconnects; then, hci0 full, bestAdapter names hci2, where the
// connect goes. btvirt gives every controller the same RSSI, so "heard best" ranks by the free
// slot and the adapter order here; the RSSI ranking is proven on the simulator (ConnectionSlotsTests).
import BlueCapKit
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Real BlueZ: connection slots", .serialized,
       .enabled(if: VM.enabled, "needs the VM: Scripts/bluez-vm/test-vm sets BLUECAP_VM=1"))
struct VMConnectionSlotsTests {
    static let uuid = BLEUUID(string: "B1CA5107-0000-4000-8000-00000000000A")!

    /// Scans on `central` until both addresses are found.
    static func find(_ addresses: [String], on central: CentralManager) async throws -> [String: Peripheral] {
        let found = Collector<Peripheral>()
        central.startScanning(forServiceUUIDs: [uuid]).onSuccess(context: .immediate) { p in
            if addresses.contains(p.address) { found.append(p) }
        }
        defer { central.stopScanning() }
        var byAddress: [String: Peripheral] = [:]
        var seen = 0
        while byAddress.count < addresses.count {
            seen += 1
            let items = try await found.wait(for: seen, timeout: .seconds(60))
            for p in items { byAddress[p.address] = p }
        }
        return byAddress
    }

    @Test("budget 1 on hci0: the second peripheral waits until the first disconnects; hci0 full, the connect goes to hci2",
          .enabled(if: VM.controllers >= 4), .timeLimit(.minutes(5)))
    func slotsAcrossAdapters() async throws {
        let probe = try Connection(.system)
        defer { probe.close() }
        let addressA = try await VM.address(probe, "hci1")
        let addressB = try await VM.address(probe, "hci3")
        await VM.forget(probe, addressA, on: ["hci0", "hci2"])
        await VM.forget(probe, addressB, on: ["hci0", "hci2"])
        try await VM.settle(probe)

        let session = BluetoothSession()
        do {
            try await Self.scenario(session, addressA, addressB)
        } catch {
            try? await session.close(timeout: .seconds(15)).value
            throw error
        }
        // Closing the session disconnects both links and unregisters both advertisements.
        try await session.close(timeout: .seconds(15)).value
        await VM.forget(probe, addressA, on: ["hci0", "hci2"])
        await VM.forget(probe, addressB, on: ["hci0", "hci2"])
        try await VM.settle(probe)
    }

    static func scenario(_ session: BluetoothSession, _ addressA: String, _ addressB: String) async throws {
        let serverA = PeripheralManager(adapter: "hci1", session: session)
        let serverB = PeripheralManager(adapter: "hci3", session: session)
        for server in [serverA, serverB] {
            for try await state in server.whenStateChanges().values where state == .poweredOn { break }
            try await server.startAdvertising("slot", uuids: [Self.uuid]).value
        }
        let central0 = CentralManager(adapter: "hci0", session: session)
        let central2 = CentralManager(adapter: "hci2", session: session)
        try await central0.whenPoweredOn(timeout: .seconds(15)).value
        try await central2.whenPoweredOn(timeout: .seconds(15)).value
        let on0 = try await Self.find([addressA, addressB], on: central0)

        let slots = session.connectionSlots
        slots.setBudget(1, for: "hci0")
        let a0 = try #require(on0[addressA]), b0 = try #require(on0[addressB])
        let eventsA = collect(a0.connect(connectionTimeout: .seconds(30)).map(context: .immediate) { $0.connectionEvent })
        #expect(try await eventsA.wait(for: 1, timeout: .seconds(60)) == [.connect])
        let eventsB = collect(b0.connect(connectionTimeout: .seconds(30)).map(context: .immediate) { $0.connectionEvent })
        let waiting = slots.usage(of: "hci0")
        #expect(waiting.queued == 1 && waiting.free == 0, "\(waiting)")
        #expect(eventsB.items.isEmpty)

        a0.disconnect()
        #expect(try await eventsB.wait(for: 1, timeout: .seconds(60)) == [.connect])
        #expect(eventsA.items == [.connect, .forceDisconnect])
        let full = slots.usage(of: "hci0")
        #expect(full.queued == 0 && full.used == 1 && full.connecting == 0, "\(full)")

        // hci0 holds B. While hci2 scans, A is known on hci0 and hci2: the adapter with a free
        // slot is hci2 (bluetoothd drops a scanned device it is not connected to 30 s after the
        // scan, so the choice is made while hci2 hears A).
        let heard = Collector<Peripheral>()
        central2.startScanning(forServiceUUIDs: [Self.uuid]).onSuccess(context: .immediate) { p in
            if p.address == addressA { heard.append(p) }
        }
        let a2 = try await heard.wait(for: 1, timeout: .seconds(60))[0]
        #expect(slots.bestAdapter(forAddress: addressA) == "hci2", "\(slots.usage)")
        central2.stopScanning()
        let eventsA2 = collect(a2.connect(connectionTimeout: .seconds(30)).map(context: .immediate) { $0.connectionEvent })
        #expect(try await eventsA2.wait(for: 1, timeout: .seconds(60)) == [.connect])
        #expect(slots.usage(of: "hci2").used == 1)
    }
}
