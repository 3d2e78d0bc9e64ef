// ConnectionSlotsTests: the session's per-adapter connection budget — connects queue when an
// adapter is full, in order, cancelled ones leave the queue, disconnections free slots, other
// programs' connections count, the queue wait has its own deadline and error, and the adapter
// that heard a device best among those with a free slot is chosen.
@testable import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Connection slots", .serialized, .timeLimit(.minutes(1)))
struct ConnectionSlotsTests {
    let tags = ["C0:FF:EE:00:05:01", "C0:FF:EE:00:05:02", "C0:FF:EE:00:05:03"]

    /// A rig with the three SensorTags discovered on hci0.
    func rig(adapters: Int = 1) async throws -> (CentralRig, [Peripheral]) {
        let h = try await CentralRig.start(adapters: adapters)
        for t in tags { h.simulator.add(simulatedSensorTag(t)) }
        return (h, try await h.discover(tags))
    }

    /// Returns once the simulator has sent every signal of what it did so far and the session's
    /// tree has applied them.
    static func settle(_ h: CentralRig) async {
        h.simulator.sync { _ in }
        guard let tree = h.session.tree else { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in tree.synchronize { c.resume() } }
    }

    @Test("budget 1: the second connect waits in the queue and goes when the first disconnects")
    func queueUntilDisconnect() async throws {
        let (h, ps) = try await rig()
        defer { h.stop() }
        let slots = h.session.connectionSlots
        #expect(slots.budget(for: "hci0") == ConnectionSlots.defaultBudget)
        slots.setBudget(1, for: "hci0")
        let first = h.connect(ps[0])
        try await first.events.wait(for: 1)
        let second = h.connect(ps[1])
        var usage = slots.usage(of: "hci0")
        #expect(usage.used == 1 && usage.queued == 1 && usage.free == 0, "\(usage)")
        #expect(second.events.items.isEmpty && !ps[1].isConnected)

        ps[0].disconnect()
        try await second.events.wait(for: 1)
        #expect(second.events.items == [.connect])
        await Self.settle(h)
        usage = slots.usage(of: "hci0")
        #expect(usage.connected == 1 && usage.queued == 0 && usage.connectedByOthers == 0, "\(usage)")
        ps[1].disconnect()
        try await second.events.wait(for: 2)
    }

    @Test("a link BlueZ never signals Connected=true for (VM lesson 11) counts connected, not connecting, while it is up, and frees its slot when it goes")
    func linkWithoutConnectedSignal() async throws {
        let (h, ps) = try await rig()
        defer { h.stop() }
        h.simulator.setConnectedSignalWithheld(true)
        let slots = h.session.connectionSlots
        let first = h.connect(ps[0])
        try await first.events.wait(for: 1)
        await Self.settle(h)
        var usage = slots.usage(of: "hci0")
        #expect(usage.connected == 1 && usage.connecting == 0 && usage.connectedByOthers == 0 && usage.used == 1, "\(usage)")
        ps[0].disconnect()
        try await first.events.wait(for: 2)
        await Self.settle(h)
        usage = slots.usage(of: "hci0")
        #expect(usage.connected == 0 && usage.connecting == 0 && usage.used == 0, "\(usage)")
    }

    @Test("queued connects go in order; one cancelled while waiting leaves the queue at once")
    func orderAndCancel() async throws {
        let (h, ps) = try await rig()
        defer { h.stop() }
        let slots = h.session.connectionSlots
        slots.setBudget(1, for: "hci0")
        let first = h.connect(ps[0])
        try await first.events.wait(for: 1)
        let second = h.connect(ps[1])
        let third = h.connect(ps[2])
        #expect(slots.usage(of: "hci0").queued == 2)

        ps[1].disconnect()  // cancelled while waiting
        try await second.events.wait(for: 1)
        #expect(second.events.items == [.forceDisconnect])
        #expect(slots.usage(of: "hci0").queued == 1)

        ps[0].disconnect()
        try await third.events.wait(for: 1)
        #expect(third.events.items == [.connect])
        #expect(!ps[1].isConnected && second.events.items == [.forceDisconnect])
    }

    @Test("a queue wait past queueTimeout fails with noConnectionSlot naming the adapter and its usage")
    func queueDeadline() async throws {
        let (h, ps) = try await rig()
        defer { h.stop() }
        let slots = h.session.connectionSlots
        slots.setBudget(1, for: "hci0")
        slots.queueTimeout = .milliseconds(300)
        let first = h.connect(ps[0])
        try await first.events.wait(for: 1)
        var failure: BlueCapError?
        do {
            _ = try await ps[1].connect(connectionTimeout: .seconds(5)).first().value
        } catch let error as BlueCapError {
            failure = error
        }
        let error = try #require(failure)
        #expect(error.kind == .noConnectionSlot)
        #expect(error.message.contains("hci0") && error.message.contains("1/1 used") && error.message.contains("setBudget"), "\(error)")
        #expect(slots.usage(of: "hci0").queued == 0)
        // The slot is free again for a connect once the first disconnects.
        ps[0].disconnect()
        try await first.events.wait(for: 2)
        let again = h.connect(ps[1])
        try await again.events.wait(for: 1)
        #expect(again.events.items == [.connect])
    }

    @Test("another program's connection takes a slot; its disconnection frees it for the queue")
    func otherProgramsConnections() async throws {
        let (h, ps) = try await rig()
        defer { h.stop() }
        let slots = h.session.connectionSlots
        slots.setBudget(1, for: "hci0")
        // bluetoothd connects ps[0] for another client: not through this session.
        let foreign = Collector<Bool>()
        h.simulator.sync { core in core.connect(device: ps[0].identifier) { foreign.append((try? $0.get()) != nil) } }
        #expect(try await foreign.wait(for: 1) == [true])
        // The Connect's answer comes before the Connected signal: wait for the tree to have it.
        try await waitUntil("the other program's link counted") { slots.usage(of: "hci0").connectedByOthers == 1 }
        let ours = h.connect(ps[1])
        #expect(slots.usage(of: "hci0").queued == 1)
        h.simulator.sync { core in core.disconnect(device: ps[0].identifier) { _ in } }
        try await ours.events.wait(for: 1)
        #expect(ours.events.items == [.connect])
        await Self.settle(h)
        let usage = slots.usage(of: "hci0")
        #expect(usage.connected == 1 && usage.connectedByOthers == 0, "\(usage)")
    }

    @Test("without a budget, a controller out of links fails the connect (what the budget spares)")
    func controllerLimit() async throws {
        let (h, ps) = try await rig()
        defer { h.stop() }
        h.simulator.sync { $0.setConnectionLimit(1, adapter: 0) }
        let first = h.connect(ps[0])
        try await first.events.wait(for: 1)
        let second = h.connect(ps[1])
        let failures = try await second.failures.wait(for: 1, timeout: .seconds(15))
        #expect(failures[0].contains("le-connection-abort-by-local"), "\(failures)")
    }

    @Test("bestAdapter: the adapter that heard the device best, among those with a free slot")
    func bestAdapter() async throws {
        let h = try await CentralRig.start(adapters: 2)
        defer { h.stop() }
        h.simulator.sync { $0.setRSSIOffset(-20, adapter: 0) }  // hci0 is farther away
        for t in tags { h.simulator.add(simulatedSensorTag(t)) }
        let central1 = CentralManager(adapter: "hci1", session: h.session)
        defer { central1.reset() }
        try await central1.whenPoweredOn(timeout: .seconds(5)).value
        let seen = Collector<String>()
        central1.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service])
            .onSuccess(context: .immediate) { seen.append($0.address) }
        let on0 = try await h.discover(tags)
        _ = try await seen.wait(for: 3)
        central1.stopScanning()
        let slots = h.session.connectionSlots
        #expect(slots.bestAdapter(forAddress: tags[0].lowercased()) == "hci1")
        #expect(slots.bestAdapter(forAddress: "C0:FF:EE:99:99:99") == nil)

        // hci1 full: the next best with a free slot is hci0.
        slots.setBudget(1, for: "hci1")
        let p1 = try #require(central1.retrievePeripherals(withAddresses: [tags[1]]).first)
        let link = h.connect(p1)
        try await link.events.wait(for: 1)
        #expect(slots.bestAdapter(forAddress: tags[0]) == "hci0")
        #expect(slots.usage.map(\.adapter) == ["hci0", "hci1"])
        #expect(on0.count == 3)
    }

    @Test("connect(address:) through ConnectDevice takes a slot too: it waits for one, and its link counts as the session's")
    func connectDeviceTakesASlot() async throws {
        let h = try await CentralRig.start(experimental: true)
        defer { h.stop() }
        for t in tags { h.simulator.add(simulatedSensorTag(t)) }
        let slots = h.session.connectionSlots
        slots.setBudget(1, for: "hci0")
        let first = try await h.manager.connect(address: tags[0], timeout: .seconds(10)).value
        await Self.settle(h)
        var usage = slots.usage(of: "hci0")
        #expect(usage.connected == 1 && usage.connectedByOthers == 0, "\(usage)")

        // hci0 is full: the second ConnectDevice waits for the first link to go down.
        let second = h.manager.connect(address: tags[1], timeout: .seconds(10))
        #expect(slots.usage(of: "hci0").queued == 1)
        #expect(!second.isCompleted)
        first.disconnect()
        let p2 = try await second.value
        #expect(p2.isConnected && p2.address == tags[1])
        await Self.settle(h)
        usage = slots.usage(of: "hci0")
        #expect(usage.connected == 1 && usage.connectedByOthers == 0 && usage.queued == 0, "\(usage)")

        // A wait past queueTimeout fails the connect with noConnectionSlot, and leaves nothing held.
        slots.queueTimeout = .milliseconds(300)
        do {
            _ = try await h.manager.connect(address: tags[2], timeout: .seconds(10)).value
            Issue.record("connected past the budget")
        } catch let error as BlueCapError {
            #expect(error.kind == .noConnectionSlot, "\(error)")
        }
        usage = slots.usage(of: "hci0")
        #expect(usage.queued == 0 && usage.used == 1, "\(usage)")
    }

    @Test("whenUsageChanges: each change of an adapter's usage, ours and other programs' connections")
    func usageStream() async throws {
        let (h, ps) = try await rig()
        defer { h.stop() }
        let slots = h.session.connectionSlots
        let seen = Collector<SlotUsage>()
        let token = CancelToken()
        slots.whenUsageChanges().onSuccess(context: .immediate, cancelToken: token) { seen.append($0) }
        slots.setBudget(1, for: "hci0")
        let first = h.connect(ps[0])
        try await first.events.wait(for: 1)
        _ = h.connect(ps[1])
        // bluetoothd connects ps[2] for another client.
        let foreign = Collector<Bool>()
        h.simulator.sync { core in core.connect(device: ps[2].identifier) { foreign.append((try? $0.get()) != nil) } }
        #expect(try await foreign.wait(for: 1) == [true])
        // The push of the foreign link's usage runs after the tree applied the signal: wait for it.
        let items = (try? await seen.wait(until: { $0.last?.connectedByOthers == 1 }, timeout: .seconds(5))) ?? seen.items
        #expect(items.allSatisfy { $0.adapter == "hci0" }, "\(items)")
        #expect(items.contains { $0.budget == 1 && $0.used == 0 }, "\(items)")          // the budget set
        #expect(items.contains { $0.connected == 1 && $0.connectedByOthers == 0 }, "\(items)")  // ours up
        #expect(items.contains { $0.queued == 1 }, "\(items)")                          // the second waits
        #expect(items.last?.connectedByOthers == 1 && items.last?.connected == 2, "\(items.map(\.description))")  // another program's
        // No two in a row are the same: changes only.
        #expect(zip(items, items.dropFirst()).allSatisfy { $0 != $1 }, "\(items)")
        _ = token.cancel()
    }
}
