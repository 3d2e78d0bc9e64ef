// The third-party peer tier's pairing cases: BlueCapKit on the bridged RootCanal adapter against a
// Bumble peer whose SMP pairs with Just Works and bonds (peers.Pairing, NoInputNoOutput). Skipped
// unless steps/thirdparty sets BLUECAP_THIRDPARTY_PEER (the peer's address).

import BlueCapKit
import Foundation
import Testing
import TestSupport

@Suite("Third-party peer: pairing", .serialized,
       .enabled(if: ThirdPartyPeer.enabled, "needs steps/thirdparty: BLUECAP_VM=1 and BLUECAP_THIRDPARTY_PEER"))
struct ThirdPartyPairingTests {
    @Test("pair() called the moment connect(address:) completes: paired and bonded, no delay in the app", .timeLimit(.minutes(3)))
    func pairRightAfterConnect() async throws {
        let session = BluetoothSession()
        let bus = try session.testConnection()
        try await ThirdPartyGATTTests.waitDisconnected(bus)
        let manager = CentralManager(adapter: ThirdPartyPeer.adapter, session: session)
        try await manager.whenPoweredOn(timeout: .seconds(15)).value
        // bluetoothd asks the agent of the process that called Pair (LE Secure Connections Just
        // Works: an authorization, which it grants itself for a Pair in progress); without one it
        // refuses ("No agent available").
        let agent = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
        let registration = try await agent.register(for: manager).value
        defer { _ = registration.unregister() }
        let clock = ContinuousClock()
        let p = try await manager.connect(address: ThirdPartyPeer.address, timeout: .seconds(30)).value
        let connectedAt = clock.now
        #expect(p.isConnected)
        do {
            try await withDeadline(.seconds(50), "pair") { try await p.pair(timeout: .seconds(45)).value }
            print("thirdparty pairing: paired \(clock.now - connectedAt) after connect(address:) completed")
        } catch {
            print("thirdparty pairing: pair() right after the connection failed \(clock.now - connectedAt) after it: \(error)")
            p.terminate(); manager.reset()
            throw error
        }
        #expect(p.isPaired, "Device1.Paired after pair() succeeded")
        // The bond is usable at once: a read over the encrypted link.
        _ = try await p.discoverServices(timeout: .seconds(30)).value
        #expect(!p.services.isEmpty, "services after pairing")
        _ = try? await p.forget().value
        manager.reset()
    }
}
