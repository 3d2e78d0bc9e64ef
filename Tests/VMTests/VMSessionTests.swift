// Real BlueZ: one BluetoothSession for a whole gateway process — one system-bus connection for a
// central, a peripheral manager, an adapter list and an agent — and closing it.
import BlueCapKit
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

extension RealBlueZTests {
    /// This process's connections to the system bus: the unique names whose Unix process is us.
    static func ownConnections(_ probe: Connection) async throws -> Set<String> {
        let reply = try await probe.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                         interface: "org.freedesktop.DBus", member: "ListNames", timeout: VM.answerTimeout)
        guard case .array(_, let names)? = reply.body.first else { throw VMTestError("ListNames: \(reply.body)") }
        var mine: Set<String> = []
        for case .string(let name) in names where name.hasPrefix(":") {
            let pid = try? await probe.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                            interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                            arguments: [.string(name)], timeout: VM.answerTimeout)
            if pid?.body.first == .uint32(UInt32(getpid())) { mine.insert(name) }
        }
        return mine
    }

    @Test("one session for a gateway: central, peripheral manager, adapter list and agent on one system-bus connection; a read over the air; closing the session unregisters the advertisement and drops the link",
          .timeLimit(.minutes(4)))
    func oneSessionGateway() async throws {
        let probe = try Connection(.system)
        defer { probe.close() }
        try await VM.settle(probe)
        let before = try await Self.ownConnections(probe)
        let session = BluetoothSession()
        let central = CentralManager(adapter: VM.centralAdapter, session: session)
        let server = PeripheralManager(adapter: VM.peripheralAdapter, session: session)
        let adapters = Adapters(session: session)
        let agent = try await PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
            .register(session: session, asDefault: true).value
        #expect(try await adapters.list().value.count >= 2)
        try await central.whenPoweredOn(timeout: .seconds(15)).value
        for try await state in server.whenStateChanges().values where state == .poweredOn { break }
        try await server.add(MutableService(profile: Accelerometer.profile)).value
        try await server.startAdvertising("SensorTag", uuids: [Accelerometer.uuid]).value
        let added = try await Self.ownConnections(probe).subtracting(before)
        #expect(added == [try #require(session.uniqueName)], "connections this process added: \(added.sorted())")

        // Over the air, hci0 to hci1, both sides in this one session.
        let address = try await VM.address(probe, VM.peripheralAdapter)
        let peripheral: Peripheral
        if let known = central.retrievePeripherals(withAddresses: [address]).first {
            peripheral = known
        } else {
            let found = Collector<Peripheral>()
            central.startScanning(forServiceUUIDs: [Accelerometer.uuid]).onSuccess(context: .immediate) { p in
                if p.address == address { found.append(p) }
            }
            peripheral = try await found.wait(for: 1, timeout: .seconds(60))[0]
            central.stopScanning()
        }
        let events = Collector<ConnectionEvent>()
        peripheral.connect(connectionTimeout: .seconds(30)).onSuccess(context: .immediate) { events.append($0.connectionEvent) }
        #expect(try await events.wait(for: 1, timeout: .seconds(60)) == [.connect])
        _ = try await peripheral.discoverServices([Accelerometer.uuid], timeout: .seconds(30)).value
        let service = try #require(peripheral.service(Accelerometer.uuid))
        _ = try await service.discoverCharacteristics(timeout: .seconds(30)).value
        let enabled = try #require(service.characteristic(Accelerometer.Enabled.uuid))
        _ = try await enabled.read(timeout: .seconds(30)).value
        #expect(enabled.value == Data([0]))

        try await session.close(timeout: .seconds(10)).value
        #expect(central.state == .unsupported && server.state == .unsupported && !agent.isRegistered)
        #expect(!(try await Self.ownConnections(probe)).contains(try #require(session.uniqueName)))
        // bluetoothd's side: no advertisement left on hci1, the link from hci0 down.
        let clean = try await VM.settle(probe)
        #expect(clean.advertising[VM.peripheralAdapter] ?? 0 == 0 && clean.connected.isEmpty, "\(clean)")
    }
}
