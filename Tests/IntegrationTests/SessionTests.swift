// BluetoothSession: one connection for every manager of a process, the default session, closing.
@_spi(Testing) import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("BluetoothSession: one connection per process", .serialized, .timeLimit(.minutes(1)))
struct SessionTests {
    /// The unique names (one per connection) the bus daemon has now.
    static func connections(_ bus: TestBus, probe: Connection) async throws -> Set<String> {
        let reply = try await probe.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                         interface: "org.freedesktop.DBus", member: "ListNames", timeout: .seconds(5))
        guard case .array(_, let names)? = reply.body.first else { throw Missing(description: "ListNames reply \(reply.body)") }
        return Set(names.compactMap { if case .string(let n) = $0, n.hasPrefix(":") { n } else { nil } })
    }

    /// A central scanning, a peripheral manager advertising a service, an adapter list and a
    /// registered agent, all on `session`.
    struct Gateway {
        let central: CentralManager
        let server: PeripheralManager
        let adapters: Adapters
        let agent: PairingAgentRegistration
        let scanned: Collector<Peripheral>
    }

    static func gateway(_ session: BluetoothSession?, simulator: BlueZSimulator) async throws -> Gateway {
        simulator.add(simulatedSensorTag("C0:FF:EE:00:00:01"), inRangeOf: [0])
        let central = session.map { CentralManager(adapter: "hci0", session: $0) } ?? CentralManager(adapter: "hci0")
        let server = session.map { PeripheralManager(adapter: "hci1", session: $0) } ?? PeripheralManager(adapter: "hci1")
        let adapters = session.map { Adapters(session: $0) } ?? Adapters()
        let pairing = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
        let agent = try await (session.map { pairing.register(session: $0, asDefault: true) } ?? pairing.register(asDefault: true)).value
        try await central.whenPoweredOn(timeout: .seconds(5)).value
        #expect(try await adapters.list().value.count == 2)
        for try await state in server.whenStateChanges().values where state == .poweredOn { break }
        try await server.add(MutableService(profile: ConfiguredServiceProfile<TISensorTag.AccelerometerService>())).value
        try await server.startAdvertising("gateway", uuids: [AccelerometerUUIDs.service]).value
        let scanned = Collector<Peripheral>()
        central.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { scanned.append($0) }
        _ = try await scanned.wait(for: 1, timeout: .seconds(5))
        return Gateway(central: central, server: server, adapters: adapters, agent: agent, scanned: scanned)
    }

    @Test("a central, a peripheral manager, an adapter list and an agent on one session open one bus connection")
    func oneConnection() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let probe = try bus.connect()
        let before = try await Self.connections(bus, probe: probe)
        let session = bus.session()
        let g = try await Self.gateway(session, simulator: simulator)
        let added = try await Self.connections(bus, probe: probe).subtracting(before)
        #expect(added == [try #require(session.uniqueName)], "connections added: \(added.sorted())")
        #expect(g.central.session === session && g.server.session === session && g.adapters.session === session)
        g.central.stopScanning()
        _ = try? await g.agent.unregister().value
        _ = try? await g.server.shutdown().value
    }

    @Test("managers, adapter lists and agents made without a session share BluetoothSession.default")
    func defaultSession() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let probe = try bus.connect()
        let before = try await Self.connections(bus, probe: probe)
        let session = bus.session()
        BluetoothSession.replaceDefault(with: session)
        defer { BluetoothSession.replaceDefault(with: nil) }
        let g = try await Self.gateway(nil, simulator: simulator)
        #expect(g.central.session === session && g.server.session === session && g.adapters.session === session)
        let added = try await Self.connections(bus, probe: probe).subtracting(before)
        #expect(added.count == 1, "connections added: \(added.sorted())")
        try await session.close().value
    }

    @Test("closing a session stops the scan, disconnects, unregisters the advertisement, application and agent, then closes the connection")
    func closeEndsEverything() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let probe = try bus.connect()
        let session = bus.session()
        let name = try #require(session.uniqueName)
        let g = try await Self.gateway(session, simulator: simulator)
        let tag = try #require(g.scanned.items.first { $0.address == "C0:FF:EE:00:00:01" } ?? g.central.retrievePeripherals(withAddresses: ["c0:ff:ee:00:00:01"]).first)
        let events = Collector<ConnectionEvent>()
        tag.connect().onSuccess(context: .immediate) { events.append($0.connectionEvent) }
        #expect(try await events.wait(for: 1, timeout: .seconds(5)) == [.connect])
        let advertising = collect(g.server.whenAdvertisingChanges())
        let adapterEvents = Collector<String>()
        g.adapters.whenAdaptersChange().onFinish(context: .immediate) { adapterEvents.append("finished") }
        // The bus daemon drops the name when it sees the connection close, after close() returns.
        let released = Collector<String>()
        let watch = probe.subscribe(rule: MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                    member: "NameOwnerChanged", arg0: name)) { _ in released.append(name) }
        defer { watch.cancel() }
        try await watch.established()

        try await session.close().value
        _ = try await released.wait(for: 1, timeout: .seconds(10))

        #expect(!session.isOpen && session.unavailableReason == "the BluetoothSession was closed")
        #expect(g.central.state == .unsupported && !g.central.isScanning)
        #expect(g.server.state == .unsupported && !g.server.isAdvertising && g.server.services.isEmpty)
        #expect(advertising.items.last == false)
        #expect(!g.agent.isRegistered)
        #expect(adapterEvents.items == ["finished"])
        #expect(!(try await Self.connections(bus, probe: probe)).contains(name))
        // bluetoothd's side: the link is down, the advertisement and the default agent are gone.
        let device = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
        let connected = try await probe.call(destination: "org.bluez", path: try ObjectPath(device), interface: "org.freedesktop.DBus.Properties",
                                             member: "Get", arguments: [.string("org.bluez.Device1"), .string("Connected")], timeout: .seconds(2))
        #expect(connected.body.first == .variant(.bool(false)))
        #expect(simulator.defaultAgentOwner == nil)
        // A manager made on a closed session says why it cannot work.
        let late = CentralManager(session: session)
        #expect(late.state == .unsupported)
        let error = await #expect(throws: BlueCapError.self) { try await session.checkAvailable().value }
        #expect(error?.kind == .busUnavailable && error?.message.contains("closed") == true, "\(String(describing: error))")
    }

    @Test("a session on a bus without bluetoothd, or on no bus at all, says the cause and the fix")
    func unavailable() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let noBlueZ = await #expect(throws: BlueCapError.self) { try await bus.session().checkAvailable().value }
        #expect(noBlueZ?.kind == .serviceUnavailable)
        #expect(noBlueZ?.message.contains("no org.bluez on the") == true && noBlueZ?.message.contains("is bluetoothd running?") == true,
                "\(String(describing: noBlueZ))")
        let nowhere = BluetoothSession(bus: .address("unix:path=/nonexistent/bluecap-test-socket"))
        #expect(!nowhere.isOpen && nowhere.unavailableReason?.contains("/nonexistent/bluecap-test-socket") == true)
        let manager = CentralManager(session: nowhere)
        #expect(manager.state == .unsupported)
        let noBus = await #expect(throws: BlueCapError.self) { try await nowhere.checkAvailable().value }
        #expect(noBus?.kind == .busUnavailable && noBus?.message.contains("is dbus running?") == true, "\(String(describing: noBus))")
        let scan = await #expect(throws: BlueCapError.self) { try await manager.startScanning().first().value }
        #expect(scan?.kind == .busUnavailable, "\(String(describing: scan))")
    }

    @Test("futures completed on a session's context time out on the session's clock")
    func contextUsesSessionClock() async throws {
        let clock = ManualClock()
        let session = BluetoothSession(bus: .address("unix:path=/nonexistent/bluecap-test-socket"), clock: clock)
        let failures = Collector<String>()
        Promise<Int>().future.timeout(after: .seconds(30), context: session.context)
            .onFailure(context: .immediate) { failures.append("\($0)") }
        await clock.waitForPending(atLeast: 1)
        clock.advance(by: .seconds(29))
        #expect(failures.items.isEmpty)
        clock.advance(by: .seconds(1))
        #expect(try await failures.wait(for: 1) == ["\(FuturesError.timeout(after: .seconds(30)))"])
    }

    @Test("an agent registered in a session the app does not keep stays registered: the registration keeps its session open")
    func registrationKeepsSession() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1)
        defer { simulator.stop() }
        let registration = try await PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
            .register(session: simulator.session(), asDefault: true).value
        let owner = try #require(registration.session.uniqueName)
        #expect(registration.session.isOpen && registration.isRegistered)
        #expect(simulator.defaultAgentOwner == owner)
        try await registration.session.close().value
        #expect(!registration.isRegistered && simulator.defaultAgentOwner == nil)
    }
}
