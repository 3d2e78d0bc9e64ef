// Pairing on the bus tier: our PairingAgent and Peripheral.pair against the simulator's pairing
// model (agents, IO capability pairs, encrypted characteristics, and its faults).
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

private let tagAddress = "C0:FF:EE:00:20:01"

/// A SensorTag whose Data characteristic needs encryption, pairing as `pairing` says.
private func secureTag(_ pairing: SimulatedPairing = SimulatedPairing()) -> SimulatedPeripheral {
    simulatedSensorTag(tagAddress, dataFlags: [.encryptRead, .notify]).pairing(pairing)
}

/// Registers an agent for the rig's central; its requests land in the returned collector.
private func centralAgent(_ rig: CentralRig, _ capability: PairingIOCapability, _ delegate: any PairingAgentDelegate,
                          requestTimeout: Duration = .seconds(60)) async throws -> (PairingAgentRegistration, Collector<PairingRequest>) {
    let agent = PairingAgent(capability: capability, delegate: delegate, requestTimeout: requestTimeout)
    let requests = Collector<PairingRequest>()
    agent.whenRequested().onSuccess(context: .immediate) { requests.append($0) }
    let registration = try await agent.register(for: rig.manager).value
    return (registration, requests)
}

private func pairFailure(_ p: Peripheral) async -> PeripheralError? {
    do {
        try await p.pair(timeout: .seconds(10)).value
        return nil
    } catch {
        return error as? PeripheralError
    }
}

@Suite("Pairing against the simulator")
struct PairingSimulatorTests {
    @Test("an unpaired read of an encrypt-read characteristic pairs first (Just Works, as bluetoothd does) and then reads")
    func encryptedReadPairsJustWorks() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(secureTag())
        let (p, service, _) = try await rig.ready(tagAddress)
        #expect(!p.isPaired)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        _ = try await data.read().value
        #expect(data.value == Data([0, 0, 64]))
        try await waitUntil("bonded") { p.isPaired && p.isBonded }
    }

    @Test("a peripheral that refuses pairing: the encrypted read fails as on real BlueZ (ATT 0x0e, link dropped), no bond")
    func encryptedReadRefused() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(secureTag(SimulatedPairing(behavior: .reject)))
        let (p, service, events) = try await rig.ready(tagAddress)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        do {
            _ = try await data.read().value
            Issue.record("the read succeeded")
        } catch let e as PeripheralError {
            #expect(e.kind == .disconnected || e.bluez?.message == "Operation failed with ATT error: 0x0e", "\(e)")
        }
        try await events.events.wait(for: 2, timeout: .seconds(5))
        #expect(!p.isPaired)
    }

    @Test("pair() asks the central's agent what each IO capability pair needs, and bonds",
          arguments: PairingIOCapability.allCases)
    func pairEachCapability(_ central: PairingIOCapability) async throws {
        for peripheral in SimulatedIOCapability.allCases {
            let rig = try await CentralRig.start()
            defer { rig.stop() }
            rig.simulator.add(secureTag(SimulatedPairing(capability: peripheral, passkey: 123_456)))
            let (registration, requests) = try await centralAgent(rig, central, PairingHandlers.autoAccept(passkey: 123_456))
            let (p, _, _) = try await rig.ready(tagAddress)
            try await p.pair(timeout: .seconds(5)).value
            try await waitUntil("bonded") { p.isPaired && p.isBonded }
            let kinds = requests.items.map(\.kind)
            let expected: [PairingRequest.Kind]
            switch (central, peripheral) {
            case (.noInputNoOutput, _), (_, .noInputNoOutput), (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo),
                 (.displayYesNo, .displayOnly):
                expected = []
            case (.displayYesNo, .displayYesNo), (.displayYesNo, .keyboardDisplay), (.keyboardDisplay, .displayYesNo),
                 (.keyboardDisplay, .keyboardDisplay):
                expected = [.confirmation(passkey: 123_456)]
            case (.keyboardOnly, _), (.keyboardDisplay, .displayOnly):
                expected = [.passkey]
            default:
                expected = [.displayPasskey(123_456, entered: 0)]
            }
            #expect(kinds == expected, "central \(central) × peripheral \(peripheral.rawValue)")
            _ = try? await registration.unregister().value
        }
    }

    @Test("our agent rejects: pair() fails with AuthenticationRejected, the link drops, no bond")
    func agentRejects() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(secureTag(SimulatedPairing(capability: .displayYesNo)))
        let (registration, _) = try await centralAgent(rig, .displayYesNo, PairingHandlers(confirm: { _, _ in Future(value: false) }))
        defer { withExtendedLifetime(registration) {} }  // releasing it removes the agent
        let (p, _, events) = try await rig.ready(tagAddress)
        let e = try need(await pairFailure(p))
        #expect(e.kind == .authenticationRejected, "\(e)")
        try await events.events.wait(for: 2, timeout: .seconds(5))
        #expect(!p.isPaired && !p.isBonded)
    }

    @Test("the remote refuses: pair() fails with AuthenticationFailed")
    func remoteRejects() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(secureTag(SimulatedPairing(behavior: .reject)))
        let (p, _, _) = try await rig.ready(tagAddress)
        let e = try need(await pairFailure(p))
        #expect(e.kind == .authenticationFailed, "\(e)")
        #expect(!p.isPaired)
    }

    @Test("our agent never answers: pair() fails with AuthenticationTimeout after the SMP timeout and the agent is told Cancel")
    func agentNeverAnswers() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.pairingTimeout = .milliseconds(300)
        rig.simulator.add(secureTag(SimulatedPairing(capability: .displayYesNo)))
        let canceled = Collector<Int>()
        let never = Promise<Bool>()
        let (registration, _) = try await centralAgent(rig, .displayYesNo, PairingHandlers(confirm: { _, _ in never.future },
                                                                                          canceled: { canceled.append(1) }))
        defer { withExtendedLifetime(registration) {} }
        let (p, _, _) = try await rig.ready(tagAddress)
        let e = try need(await pairFailure(p))
        #expect(e.kind == .authenticationTimeout, "\(e)")
        _ = try await canceled.wait(for: 1, timeout: .seconds(5))
        never.success(true)
        #expect(!p.isPaired)
    }

    @Test("the agent's request timeout runs on the session's clock: moving a manual clock past it answers Canceled")
    func agentTimeoutOnSessionClock() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        rig.simulator.pairingTimeout = .seconds(600)
        rig.simulator.add(secureTag(SimulatedPairing(capability: .displayYesNo)))
        let asked = Collector<UInt32>()
        let never = Promise<Bool>()
        let (registration, _) = try await centralAgent(rig, .displayYesNo, PairingHandlers(confirm: { key, _ in asked.append(key); return never.future }),
                                                       requestTimeout: .seconds(60))
        defer { withExtendedLifetime(registration) {} }
        let (p, _, _) = try await rig.ready(tagAddress)
        let pairing = Task { () -> PeripheralError? in
            do { try await p.pair(timeout: .seconds(3600)).value } catch { return error as? PeripheralError }
            return nil
        }
        _ = try await asked.wait(for: 1, timeout: .seconds(5))
        await rig.advance(by: .seconds(61))
        let e = try await withDeadline(.seconds(10), "pair() answered after the agent's timeout") { try need(await pairing.value) }
        #expect(e.kind == .authenticationCanceled, "\(e)")
        never.success(true)
        #expect(!p.isPaired)
    }

    @Test("cancelPairing() while the agent decides: pair() fails with AuthenticationCanceled")
    func cancelWhilePairing() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(secureTag(SimulatedPairing(capability: .displayYesNo)))
        let asked = Collector<UInt32>()
        let answer = Promise<Bool>()
        let (registration, _) = try await centralAgent(rig, .displayYesNo,
                                                       PairingHandlers(confirm: { key, _ in asked.append(key); return answer.future }))
        defer { withExtendedLifetime(registration) {} }
        let (p, _, _) = try await rig.ready(tagAddress)
        let pairing = Task { await pairFailure(p) }
        _ = try await asked.wait(for: 1, timeout: .seconds(5))
        try await p.cancelPairing().value
        let e = try need(await pairing.value)
        #expect(e.kind == .authenticationCanceled, "\(e)")
        answer.success(true)
        #expect(!p.isPaired)
    }

    @Test("the bond holds across disconnect and reconnect: the encrypted read works again and no agent is asked")
    func bondHeldAcrossReconnection() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(secureTag(SimulatedPairing(capability: .displayYesNo)))
        let (registration, requests) = try await centralAgent(rig, .displayYesNo, PairingHandlers.autoAccept())
        defer { withExtendedLifetime(registration) {} }
        var (p, service, events) = try await rig.ready(tagAddress)
        try await p.pair().value
        #expect(requests.items.count == 1)
        _ = try await need(service.characteristic(AccelerometerUUIDs.data)).read().value
        p.disconnect()
        try await events.events.wait(for: 2, timeout: .seconds(5))
        events = rig.connect(p)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        service = try await rig.services(of: p)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        _ = try await data.read().value
        #expect(data.value == Data([0, 0, 64]))
        #expect(p.isBonded)
        #expect(requests.items.count == 1, "asked again: \(requests.items)")
    }

    @Test("the remote lost the bond: the encrypted read fails until forget() and a new pair()")
    func bondLostOnRemote() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(secureTag())
        var (p, service, events) = try await rig.ready(tagAddress)
        try await p.pair().value
        rig.simulator.loseBond(peripheral: tagAddress)
        p.disconnect()
        try await events.events.wait(for: 2, timeout: .seconds(5))
        events = rig.connect(p)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        service = try await rig.services(of: p)
        let data = try need(service.characteristic(AccelerometerUUIDs.data))
        await #expect(throws: PeripheralError.self) { _ = try await data.read().value }
        #expect(p.isPaired, "our side still holds the keys")
        try await p.forget().value
        p = try await rig.discover(tagAddress)
        #expect(!p.isPaired)
        events = rig.connect(p)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        try await p.pair().value
        let again = try need(try await rig.services(of: p).characteristic(AccelerometerUUIDs.data))
        _ = try await again.read().value
        #expect(again.value == Data([0, 0, 64]))
    }

    @Test("our peripheral's default agent authorizes a central's Just Works pairing; both sides bonded; the app sees the central paired")
    func peripheralManagerAgent() async throws {
        let secret = MutableCharacteristic(uuid: BLEUUID("B1E0C0DE-0001-4000-8000-00000000C0DE"), properties: [.read],
                                           permissions: [.readable, .readEncryptionRequired], value: Data([0x5E, 0xC0]))
        let service = MutableService(uuid: BLEUUID("B1E0C0DE-0000-4000-8000-00000000C0DE"), characteristics: [secret])
        let rig = try await PeripheralRig.start(serving: service)
        let allow = Atomic<Bool>(false)
        let requests = Collector<PairingRequest>()
        let agent = PairingAgent(capability: .noInputNoOutput,
                                 delegate: PairingHandlers(authorize: { _ in Future(value: allow.load(ordering: .sequentiallyConsistent)) }))
        agent.whenRequested().onSuccess(context: .immediate) { requests.append($0) }
        let registration = try await agent.register(for: rig.peripheralManager).value
        #expect(registration.isDefault)
        #expect(rig.simulator.defaultAgentOwner == rig.peripheralConnection.uniqueName)
        let found = Collector<Peripheral>()
        rig.central.startScanning(forServiceUUIDs: [service.uuid]).onSuccess(context: .immediate) { found.append($0) }
        let p = try await found.wait(for: 1, timeout: .seconds(5))[0]
        rig.central.stopScanning()
        let events = ConnectionEvents()
        p.connect(connectionTimeout: .seconds(5)).onSuccess(context: .immediate) { events.events.append($0.connectionEvent) }
        try await events.events.wait(for: 1, timeout: .seconds(5))
        let e = try need(await pairFailure(p))
        #expect(e.kind == .authenticationFailed, "refused by the peripheral's agent: \(e)")
        allow.store(true, ordering: .sequentiallyConsistent)
        try await events.events.wait(for: 2, timeout: .seconds(5))
        try await p.pair(timeout: .seconds(5)).value
        #expect(requests.items.map(\.kind) == [.authorization, .authorization])
        let centralPath = requests.items[0].device.identifier
        try await waitUntil("peripheral side paired") {
            rig.peripheralManager.pairingState(of: CentralIdentity(devicePath: centralPath))?.isBonded == true
        }
        #expect(p.isBonded)
        await rig.stop()
    }

    @Test("only bluetoothd may call the agent: another bus client gets AccessDenied; after bluetoothd restarts the agent is registered again")
    func agentCallerCheckAndRestart() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let agent = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
        let registration = try await agent.register(session: rig.session, asDefault: true).value
        let stranger = try rig.bus.connect()
        defer { stranger.close() }
        do {
            _ = try await stranger.call(destination: rig.client.uniqueName, path: try ObjectPath(agent.path),
                                        interface: "org.bluez.Agent1", member: "RequestAuthorization",
                                        arguments: [.objectPath(ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_01"))],
                                        timeout: .seconds(5))
            Issue.record("a stranger's call was answered")
        } catch let e as DBusCallError {
            guard case .remote(let remote) = e else { Issue.record("\(e)"); return }
            #expect(remote.name == DBusRemoteError.accessDenied)
        }
        try await rig.simulator.restart()
        try await waitUntil("registered again", timeout: .seconds(10)) {
            rig.simulator.defaultAgentOwner == rig.client.uniqueName && registration.isRegistered
        }
    }
}
