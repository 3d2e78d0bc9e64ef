// Descriptor security on the bus tier: a MutableCharacteristic's descriptors export
// GattDescriptor1 Flags with BlueZ's security flags, and the simulated bluetoothd refuses an
// unpaired central's access to an encrypted descriptor until it pairs.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

private let serviceUUID = BLEUUID("B1E0C0DE-0000-4000-8000-00000000D350")
private let charUUID = BLEUUID("B1E0C0DE-0001-4000-8000-00000000D350")
private let plainUUID = BLEUUID("B1E0C0DE-0002-4000-8000-00000000D350")
private let secretUUID = BLEUUID("B1E0C0DE-0003-4000-8000-00000000D350")

@Suite("Descriptor security flags")
struct DescriptorSecurityTests {
    @Test("a descriptor's permissions become GattDescriptor1 Flags as BlueZ defines them")
    func flagsFromPermissions() {
        #expect(MutableDescriptor.bluezFlags([.readable]) == ["read"])
        #expect(MutableDescriptor.bluezFlags([.readable, .writeable, .readEncryptionRequired, .writeEncryptionRequired])
            == ["read", "write", "encrypt-read", "encrypt-write"])
        #expect(MutableDescriptor.bluezFlags([.readable, .writeable, .readAuthenticationRequired, .writeAuthenticationRequired])
            == ["read", "write", "encrypt-authenticated-read", "encrypt-authenticated-write"])
        #expect(MutableDescriptor.bluezFlags([.readable, .writeable, .readSecureConnectionRequired, .writeSecureConnectionRequired])
            == ["read", "write", "secure-read", "secure-write"])
        // A requirement for an access the descriptor does not allow is not exported.
        #expect(MutableDescriptor.bluezFlags([.readable, .writeEncryptionRequired]) == ["read"])
        #expect(MutableDescriptor.bluezFlags([.readable, .authorize]) == ["read", "authorize"])
    }

    @Test("an encrypt-read descriptor refuses an unpaired central until the peripheral's agent lets it pair; a plain one does not ask")
    func encryptedDescriptorNeedsPairing() async throws {
        let plain = MutableDescriptor(uuid: plainUUID, permissions: [.readable], value: Data([0x01]))
        let secret = MutableDescriptor(uuid: secretUUID, permissions: [.readable, .readEncryptionRequired], value: Data([0x5E]))
        let characteristic = MutableCharacteristic(uuid: charUUID, properties: [.read], permissions: [.readable],
                                                   value: Data([0x00]), descriptors: [plain, secret])
        #expect(characteristic.descriptors.map(\.flags) == [["read"], ["read", "encrypt-read"]])
        let service = MutableService(uuid: serviceUUID, characteristics: [characteristic])
        let rig = try await PeripheralRig.start(serving: service)
        let allow = Atomic<Bool>(false)
        let requests = Collector<PairingRequest>()
        let agent = PairingAgent(capability: .noInputNoOutput,
                                 delegate: PairingHandlers(authorize: { _ in Future(value: allow.load(ordering: .sequentiallyConsistent)) }))
        agent.whenRequested().onSuccess(context: .immediate) { requests.append($0) }
        let registration = try await agent.register(for: rig.peripheralManager).value
        defer { withExtendedLifetime(registration) {} }

        let found = Collector<Peripheral>()
        rig.central.startScanning(forServiceUUIDs: [serviceUUID]).onSuccess(context: .immediate) { found.append($0) }
        let p = try await found.wait(for: 1, timeout: .seconds(5))[0]
        rig.central.stopScanning()
        func connectAndFind() async throws -> (Characteristic, ConnectionEvents) {
            let events = ConnectionEvents()
            p.connect(connectionTimeout: .seconds(5)).onSuccess(context: .immediate) { events.events.append($0.connectionEvent) }
            try await events.events.wait(for: 1, timeout: .seconds(5))
            _ = try await p.discoverServices([serviceUUID], timeout: .seconds(5)).value
            let s = try need(p.service(serviceUUID))
            _ = try await s.discoverCharacteristics(timeout: .seconds(5)).value
            return (try need(s.characteristic(charUUID)), events)
        }
        var (c, events) = try await connectAndFind()

        // The plain descriptor reads without pairing; the encrypted one needs it, which the
        // peripheral's agent refuses: the read fails and nothing is bonded.
        let plainRead = try await need(c.descriptor(plainUUID)).read(timeout: .seconds(5)).value
        #expect(plainRead.value == Data([0x01]))
        #expect(requests.items.isEmpty)
        do {
            _ = try await need(c.descriptor(secretUUID)).read(timeout: .seconds(5)).value
            Issue.record("an unpaired central read an encrypt-read descriptor")
        } catch let e as PeripheralError {
            #expect(e.kind == .disconnected || e.attError == .unlikelyError, "\(e)")
        }
        #expect(requests.items.map(\.kind) == [.authorization])
        #expect(!p.isPaired)

        // Allowed: the read pairs (the agent asked again) and succeeds.
        allow.store(true, ordering: .sequentiallyConsistent)
        try await events.events.wait(for: 2, timeout: .seconds(5))  // connected, then the dropped link
        (c, events) = try await connectAndFind()
        let secretRead = try await need(c.descriptor(secretUUID)).read(timeout: .seconds(5)).value
        #expect(secretRead.value == Data([0x5E]))
        #expect(requests.items.map(\.kind) == [.authorization, .authorization])
        try await waitUntil("paired") { p.isPaired }
        await rig.stop()
    }
}
