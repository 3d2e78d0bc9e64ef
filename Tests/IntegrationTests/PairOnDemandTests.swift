// Pair on demand on the bus tier: a peripheral whose refusal bluetoothd does not answer by pairing
// itself (`bluetoothdPairsItself: false`: BlueZ answers `NotPermitted` "Not paired"); the
// read/write with `pairOnDemand` pairs once (Device1.Pair, our agent asked) and retries once.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

private let tagAddress = "C0:FF:EE:00:20:02"

/// A SensorTag whose Data characteristic needs encryption to be read and written, and that
/// bluetoothd does not pair with by itself.
private func refusingTag(_ behavior: SimulatedPairing.Behavior = .accept) -> SimulatedPeripheral {
    simulatedSensorTag(tagAddress, dataFlags: [.read, .encryptRead, .write, .encryptWrite])
        .pairing(SimulatedPairing(capability: .displayYesNo, behavior: behavior, bluetoothdPairsItself: false))
}

/// Registers a DisplayYesNo agent for the rig's central that confirms `confirms`; its requests
/// land in the returned collector.
private func agent(_ rig: CentralRig, confirms: Bool) async throws -> (PairingAgentRegistration, Collector<PairingRequest>) {
    let agent = PairingAgent(capability: .displayYesNo, delegate: PairingHandlers(confirm: { _, _ in Future(value: confirms) }))
    let requests = Collector<PairingRequest>()
    agent.whenRequested().onSuccess(context: .immediate) { requests.append($0) }
    return (try await agent.register(for: rig.manager).value, requests)
}

private func failure(_ f: Future<Characteristic>) async -> PeripheralError? {
    do {
        _ = try await f.value
        return nil
    } catch {
        return error as? PeripheralError
    }
}

@Suite("Pair on demand against the simulator")
struct PairOnDemandTests {
    @Test("without pairOnDemand the refusal surfaces unchanged (NotPermitted \"Not paired\") and nothing pairs")
    func refusalSurfacesUnchanged() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(refusingTag())
        let (registration, requests) = try await agent(rig, confirms: true)
        defer { withExtendedLifetime(registration) {} }
        let (p, service, _) = try await rig.ready(tagAddress)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        let e = try need(await failure(data.read()))
        #expect(e.kind == .notPermitted && e.message == "Not paired", "\(e)")
        #expect(e.needsPairing)
        let e2 = try need(await failure(data.read(pairOnDemand: false)))
        #expect(e2.kind == .notPermitted, "\(e2)")
        #expect(requests.items.isEmpty)
        #expect(!p.isPaired)
    }

    @Test("with pairOnDemand a refused read pairs once (our agent asked once) and the retried read succeeds")
    func readPairsAndRetries() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(refusingTag())
        let (registration, requests) = try await agent(rig, confirms: true)
        defer { withExtendedLifetime(registration) {} }
        let (p, service, _) = try await rig.ready(tagAddress)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        _ = try await data.read(pairOnDemand: true).value
        #expect(data.value == Data([0, 0, 64]))
        #expect(requests.items.count == 1, "\(requests.items)")
        try await waitUntil("bonded") { p.isPaired && p.isBonded }
        // Paired now: the next read needs no pairing.
        _ = try await data.read(pairOnDemand: true).value
        #expect(requests.items.count == 1)
    }

    @Test("with pairOnDemand a refused write pairs once and the retried write lands")
    func writePairsAndRetries() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(refusingTag())
        let (registration, requests) = try await agent(rig, confirms: true)
        defer { withExtendedLifetime(registration) {} }
        let (p, service, _) = try await rig.ready(tagAddress)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        #expect(await failure(data.write(data: Data([1, 2, 3]))) != nil)
        _ = try await data.write(data: Data([1, 2, 3]), pairOnDemand: true).value
        #expect(requests.items.count == 1)
        #expect(p.isPaired)
        _ = try await data.read().value
        #expect(data.value == Data([1, 2, 3]))
    }

    @Test("with pairOnDemand a pairing our agent refuses fails the read with AuthenticationRejected; no second retry")
    func refusedPairingSurfaces() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(refusingTag())
        let (registration, requests) = try await agent(rig, confirms: false)
        defer { withExtendedLifetime(registration) {} }
        let (p, service, _) = try await rig.ready(tagAddress)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        let e = try need(await failure(data.read(pairOnDemand: true)))
        #expect(e.kind == .authenticationRejected, "\(e)")
        #expect(requests.items.count == 1, "paired more than once: \(requests.items)")
        #expect(!p.isPaired)
    }

    @Test("with pairOnDemand a pairing the remote refuses fails the read with AuthenticationFailed")
    func remoteRefusesPairing() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(refusingTag(.reject))
        let (registration, _) = try await agent(rig, confirms: true)
        defer { withExtendedLifetime(registration) {} }
        let (p, service, _) = try await rig.ready(tagAddress)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        let e = try need(await failure(data.read(pairOnDemand: true)))
        #expect(e.kind == .authenticationFailed, "\(e)")
        #expect(!p.isPaired)
    }
}
