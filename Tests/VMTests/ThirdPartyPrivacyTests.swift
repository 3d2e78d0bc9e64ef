// The third-party peer tier's privacy case: BlueCapKit on the bridged RootCanal adapter against a
// Bumble peer that advertises from resolvable private addresses, a new one after each link
// (peers.PrivacyPeer), and bonds with Just Works handing over its IRK and its public identity
// address (BLUECAP_THIRDPARTY_PEER). run.py runs `bondAndReconnectByIdentity`, restarts
// bluetoothd, then runs `afterRestarts` in a new process.

import BlueCapKit
import Foundation
import Testing
import TestSupport

@Suite("Third-party peer: privacy, by the identity address", .serialized,
       .enabled(if: ThirdPartyPeer.enabled, "needs steps/thirdparty: BLUECAP_VM=1 and BLUECAP_THIRDPARTY_PEER"))
struct ThirdPartyPrivacyTests {
    static let identity = ThirdPartyPeer.address
    static let name = ThirdPartyPeer.environment["BLUECAP_THIRDPARTY_NAME"] ?? "PrivacyPeer"
    static let accelerometer = BLEUUID(string: "F000AA10-0451-4000-B000-000000000000")!
    static let data = BLEUUID(string: "F000AA11-0451-4000-B000-000000000000")!

    /// A manager on the bridged adapter with a Just Works agent registered.
    static func manager() async throws -> (CentralManager, PairingAgentRegistration) {
        let manager = CentralManager(adapter: ThirdPartyPeer.adapter, session: BluetoothSession())
        try await manager.whenPoweredOn(timeout: .seconds(30)).value
        let agent = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
        return (manager, try await agent.register(for: manager).value)
    }

    /// Discovers the accelerometer service and reads its data characteristic (3 bytes).
    static func read(_ p: Peripheral) async throws {
        _ = try await p.discoverServices([accelerometer], timeout: .seconds(30)).value
        let service = try #require(p.service(accelerometer))
        _ = try await service.discoverCharacteristics([data], timeout: .seconds(15)).value
        let c = try #require(service.characteristic(data))
        _ = try await c.read(timeout: .seconds(15)).value
        #expect(c.value?.count == 3, "read \(c.value?.count ?? -1) bytes")
    }

    /// Disconnects and waits for bluetoothd to say so (the peer then advertises from a new
    /// private address).
    static func down(_ p: Peripheral) async throws {
        p.disconnect()
        try await waitUntil("\(p.identifier) disconnected", timeout: .seconds(20)) { !p.isConnected }
    }

    @Test("found at a private address, bonded: Peripheral.address is the identity; after rotations it reconnects through the same Peripheral, connect(address: identity) and retrievePeripherals",
          .timeLimit(.minutes(5)))
    func bondAndReconnectByIdentity() async throws {
        let (manager, registration) = try await Self.manager()
        defer { _ = registration.unregister(); manager.reset() }
        // Its address is private and unknown: found by its name.
        let found = Collector<Peripheral>()
        manager.startScanning(forServiceUUIDs: [Self.accelerometer]).onSuccess(context: .immediate) { p in
            if p.name == Self.name { found.append(p) }
        }
        let p = try await found.wait(for: 1, timeout: .seconds(30))[0]
        manager.stopScanning()
        let first = p.address
        print("thirdparty privacy: found at \(first) (\(p.addressType.map(\.rawValue) ?? "?")), identity \(Self.identity)")
        #expect(first != Self.identity && p.addressType == .random)

        let events = Collector<ConnectionEvent>()
        p.connect(connectionTimeout: .seconds(20)).onSuccess(context: .immediate) { events.append($0.connectionEvent) }
        #expect(try await events.wait(for: 1, timeout: .seconds(30)) == [.connect])
        try await p.pair(timeout: .seconds(45)).value
        try await waitUntil("Device1.Address the identity", timeout: .seconds(10)) { p.address == Self.identity }
        print("thirdparty privacy: bonded; address \(p.address) (\(p.addressType.map(\.rawValue) ?? "?")), discovered at \(p.discoveredAddress)")
        #expect(p.addressType == .public && p.discoveredAddress == first && p.isBonded)
        try await Self.read(p)

        // The same Peripheral, after the peer took a new private address.
        try await Self.down(p)
        p.reconnect()
        try await waitUntil("reconnected through the same Peripheral", timeout: .seconds(30)) { p.isConnected }
        try await Self.read(p)

        // By the identity address.
        try await Self.down(p)
        let byAddress = try await manager.connect(address: Self.identity, timeout: .seconds(30)).value
        #expect(byAddress === p, "connect(address: identity) connects the bonded device's Peripheral")
        try await Self.read(byAddress)

        try await Self.down(p)
        #expect(manager.retrievePeripherals(withAddresses: [Self.identity]) == [p])
        print("thirdparty privacy: reconnected three times after rotations; events \(events.items)")
    }

    @Test("after bluetoothd and our process restart: the bonded peer by its identity address (retrievePeripherals, connect(address:)), read without pairing again",
          .timeLimit(.minutes(3)))
    func afterRestarts() async throws {
        let (manager, registration) = try await Self.manager()
        defer { _ = registration.unregister(); manager.reset() }
        let known = manager.retrievePeripherals(withAddresses: [Self.identity])
        let p = try #require(known.first, "bluetoothd lists the bonded device again after its restart")
        print("thirdparty privacy: after the restarts \(p.identifier), address \(p.address), bonded \(p.isBonded)")
        #expect(p.address == Self.identity && p.isBonded)
        let connected = try await manager.connect(address: Self.identity, timeout: .seconds(30)).value
        #expect(connected === p)
        try await Self.read(p)
        #expect(p.isPaired)
    }
}
