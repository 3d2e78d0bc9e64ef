// A peer that uses BLE privacy (BlueZSimulator: SimulatedPeripheral.privacy(), rotatePrivateAddress):
// it advertises from resolvable private addresses that change; once bonded, bluetoothd states its
// identity address in Device1.Address while the object path keeps the private address it was
// found at. Peripheral.address follows Device1.Address, and every lookup by address matches it.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Central: a peer that uses privacy, by its identity address", .serialized, .timeLimit(.minutes(1)))
struct PrivacyAddressTests {
    static let identity = "C0:FF:EE:00:05:41"

    /// Scans until a peripheral advertising the accelerometer service other than `known` is heard.
    static func nextFound(_ rig: CentralRig, besides known: Set<String> = []) async throws -> Peripheral {
        let found = Collector<Peripheral>()
        rig.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service])
            .onSuccess(context: .immediate) { if !known.contains($0.identifier) { found.append($0) } }
        defer { rig.manager.stopScanning() }
        return try await found.wait(for: 1, timeout: .seconds(5))[0]
    }

    @Test("before bonding each private address is a device of its own; bonded, Peripheral.address is the identity (public), discoveredAddress the first private address; after a rotation the same Peripheral reconnects, and retrievePeripherals and connect(address:) find it by the identity")
    func identityAfterBonding() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(simulatedSensorTag(Self.identity).privacy())
        let p = try await Self.nextFound(rig)
        let firstPrivate = p.address
        #expect(firstPrivate != Self.identity && p.addressType == .random, "\(p.address) \(String(describing: p.addressType))")
        #expect(p.discoveredAddress == firstPrivate)
        #expect(rig.manager.retrievePeripherals(withAddresses: [Self.identity]).isEmpty, "not bonded: nothing states the identity yet")

        // Unbonded, a new private address is a new device.
        rig.simulator.rotatePrivateAddress(of: Self.identity)
        let other = try await Self.nextFound(rig, besides: [p.identifier])
        #expect(other !== p && other.address != firstPrivate)

        // Bonded: the identity, from Device1.Address.
        let agent = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
        let registration = try await agent.register(for: rig.manager).value
        defer { _ = registration.unregister() }
        let events = rig.connect(p)
        #expect(try await events.events.wait(for: 1, timeout: .seconds(5)) == [.connect])
        try await p.pair(timeout: .seconds(10)).value
        try await waitUntil("Device1.Address the identity") { p.address == Self.identity }
        #expect(p.addressType == .public)
        #expect(p.discoveredAddress == firstPrivate, "the object path keeps the first private address")
        #expect(p.identifier.hasSuffix(firstPrivate.replacingOccurrences(of: ":", with: "_")))

        // After a rotation: the same Peripheral reconnects; lookups by the identity find it.
        p.disconnect()
        try await waitUntil("disconnected") { !p.isConnected }
        rig.simulator.rotatePrivateAddress(of: Self.identity)
        #expect(rig.manager.retrievePeripherals(withAddresses: [Self.identity.lowercased()]) == [p])
        p.reconnect()
        try await waitUntil("reconnected") { p.isConnected }
        _ = try await rig.services(of: p)
        p.disconnect()
        try await waitUntil("disconnected again") { !p.isConnected }
        let byAddress = try await rig.manager.connect(address: Self.identity, timeout: .seconds(5)).value
        #expect(byAddress === p, "connect(address: identity) connects the bonded device")
        #expect(p.isConnected)
        #expect(rig.manager.retrievePeripherals(withAddresses: [firstPrivate]).isEmpty,
                "the private address it was found at is no longer its Device1.Address")
    }
}
