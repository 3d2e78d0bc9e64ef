// Adapters: enumeration, settings, hot-plug, a manager losing its adapter, several adapters scanning.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Adapters", .serialized, .timeLimit(.minutes(1)))
struct AdapterTests {
    @Test("list() gives every adapter bluetoothd publishes, by index, with address, names, flags and roles")
    func enumeration() async throws {
        let h = try await CentralRig.start(adapters: 3, experimental: true)
        defer { h.stop() }
        let adapters = Adapters(session: h.session)
        let list = try await adapters.list().value
        #expect(list.map(\.name) == ["hci0", "hci1", "hci2"])
        #expect(list.map(\.address) == (0..<3).map { h.simulator.adapterAddress($0) })
        #expect(list.allSatisfy { $0.powered && $0.pairable && !$0.discoverable && !$0.discovering })
        #expect(list[1].systemName == "bluez-sim #1" && list[1].alias == "bluez-sim #1")
        #expect(list[0].roles == ["central", "peripheral"])
        #expect(list.filter(\.supportsMonitoring).count == 3)
        #expect(try await h.manager.adapters().value == list)
    }

    @Test("setting Powered, Alias, Discoverable (with its timeout) and Pairable is seen in the stream as changes")
    func settings() async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        let adapters = Adapters(session: h.session)
        _ = try await adapters.list().value
        let events = collect(adapters.whenAdaptersChange())
        try await adapters.setAlias("gateway", adapter: "hci1").value
        try await adapters.setDiscoverable(true, discoverableFor: 0, adapter: "hci1").value
        try await adapters.setPairable(false, adapter: "hci1").value
        try await adapters.setPowered(false, adapter: "hci1").value
        try await waitUntil("hci1 off in the stream") { events.items.last?.adapter.powered == false }
        let last = try #require(events.items.last)
        #expect(last == .changed(last.adapter))
        #expect(last.adapter.name == "hci1" && last.adapter.alias == "gateway" && !last.adapter.pairable)
        #expect(events.items.contains { $0.adapter.discoverable })
        #expect(events.items.allSatisfy { $0.adapter.name == "hci1" })
        #expect(adapters.adapter(named: "hci0")?.powered == true)
        try await adapters.setPowered(true, adapter: "hci1").value
        try await waitUntil("hci1 on") { adapters.adapter(named: "hci1")?.powered == true }
    }

    @Test("a setter on an adapter bluetoothd does not have fails with notFound")
    func unknownAdapter() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let adapters = Adapters(session: h.session)
        let error = await #expect(throws: BlueCapError.self) { try await adapters.setPowered(true, adapter: "hci7").value }
        #expect(error?.kind == .doesNotExist, "\(String(describing: error))")
        #expect(error?.path == "/org/bluez/hci7")
        #expect(error?.operation == "Adapters.setPowered (org.bluez.Adapter1.Powered)")
    }

    @Test("an adapter unplugged and plugged back is seen as removed then added, with the same address")
    func hotPlug() async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        let adapters = Adapters(session: h.session)
        let before = try await adapters.list().value
        let events = collect(adapters.whenAdaptersChange())
        h.simulator.removeAdapter(1)
        try await waitUntil("removed") { events.items.contains { if case .removed(let a) = $0 { a.name == "hci1" } else { false } } }
        #expect(adapters.all.map(\.name) == ["hci0"])
        #expect(h.simulator.addAdapter() == 1)
        try await waitUntil("added") { events.items.contains { if case .added = $0 { true } else { false } } }
        guard case .added(let back)? = events.items.last(where: { if case .added = $0 { true } else { false } }) else { return }
        #expect(back.address == before[1].address && back.name == "hci1")
    }

    @Test("a manager bound to hci1 reads .poweredOff while hci1 is unplugged and .poweredOn once it is back")
    func boundManagerLosesAdapter() async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        let manager = CentralManager(adapter: "hci1", session: h.session)
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let states = collect(manager.whenStateChanges())
        h.simulator.removeAdapter(1)
        try await waitUntil("poweredOff without an adapter") { states.items.last == .poweredOff && manager.adapter == nil }
        #expect(!states.items.contains(.resetting) && !states.items.contains(.unsupported), "\(states.items)")
        h.simulator.addAdapter()
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        #expect(manager.adapter == "hci1")
    }

    @Test("a manager bound to hci1 follows its address: another controller taking hci1 is not it; its own back as hci2 is")
    func boundManagerFollowsAddress() async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        let manager = CentralManager(adapter: "hci1", session: h.session)
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        let address = try #require(h.simulator.adapterAddress(1))
        let states = collect(manager.whenStateChanges())
        h.simulator.removeAdapter(1)
        try await waitUntil("poweredOff without an adapter") { states.items.last == .poweredOff && manager.adapter == nil }
        #expect(h.simulator.addAdapter(address: "00:B1:0E:5C:00:99") == 1)
        #expect(h.simulator.addAdapter(address: address) == 2)
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        #expect(manager.adapter == "hci2")
    }

    @Test("a manager without an adapter name moves to another powered adapter when its own is removed, and says so")
    func automaticManagerMoves() async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        #expect(h.manager.adapter == "hci0")
        let moves = collect(h.manager.whenAdapterChanges())
        let states = collect(h.manager.whenStateChanges())
        h.simulator.removeAdapter(0)
        try await waitUntil("moved to hci1") { moves.items.last == "hci1" }
        // bluetoothd powers an adapter off before removing it: .poweredOff may be seen on the way.
        try await waitUntil("powered on") { states.items.last == .poweredOn }
        #expect(!states.items.contains(.resetting) && !states.items.contains(.unsupported), "\(states.items)")
        // It scans on the new adapter.
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:21"), inRangeOf: [1])
        let p = try await h.discover("C0:FF:EE:00:00:21")
        #expect(p.identifier.hasPrefix("/org/bluez/hci1/"))
    }

    @Test("scanning on several adapters at once tags each result with the adapter that heard it")
    func multiAdapterScan() async throws {
        let h = try await CentralRig.start(adapters: 3)
        defer { h.stop() }
        let adapters = Adapters(session: h.session)
        _ = try await adapters.list().value
        let seen = Collector<String>()
        adapters.startScanning(on: ["hci0", "hci2"], forServiceUUIDs: [AccelerometerUUIDs.service])
            .onSuccess(context: .immediate) { seen.append("\($0.adapter) \($0.peripheral.address)") }
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:31"), inRangeOf: [0, 2])
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:32"), inRangeOf: [2])
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:33"), inRangeOf: [1])
        try await seen.wait(for: 3)
        #expect(Set(seen.items) == ["hci0 C0:FF:EE:00:00:31", "hci2 C0:FF:EE:00:00:31", "hci2 C0:FF:EE:00:00:32"])
        let clients = h.simulator.sync { core in [0, 1, 2].map { core.discoveryClients(adapter: $0).count } }
        #expect(clients == [1, 0, 1])
        adapters.stopScanning()
        try await waitUntil("discovery stopped on both") {
            h.simulator.sync { core in core.discoveryClients(adapter: 0).isEmpty && core.discoveryClients(adapter: 2).isEmpty }
        }
        #expect(!seen.items.contains { $0.hasSuffix(":33") })
    }

    @Test("a multi-adapter scan whose every subscription is cancelled stops discovering on each adapter")
    func abandonedScanStops() async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        let adapters = Adapters(session: h.session)
        _ = try await adapters.list().value
        let seen = Collector<String>()
        let token = CancelToken()
        adapters.startScanning(on: ["hci0", "hci1"], forServiceUUIDs: [AccelerometerUUIDs.service])
            .onSuccess(context: .immediate, cancelToken: token) { seen.append($0.adapter) }
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:41"), inRangeOf: [0, 1])
        try await seen.wait(for: 2)
        let stopped = Collector<String>()
        adapters.whenAdaptersChange().onSuccess(context: .immediate) { event in
            if !event.adapter.discovering { stopped.append(event.adapter.name) }
        }
        token.cancel()
        #expect(Set(try await stopped.wait(for: 2)) == ["hci0", "hci1"])
        #expect(!adapters.isScanning)
        #expect(h.simulator.sync { core in [0, 1].map { core.discoveryClients(adapter: $0).count } } == [0, 0])
    }
}
