// L2CAP channels under BlueZSimulator: a PeripheralManager on hci1 publishes, a CentralManager on
// hci0 opens, both through the public API; the channel runs over the simulator's socket pairs.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("L2CAP channels in the simulator", .serialized)
struct L2CAPSimulatorTests {
    /// A rig with a peripheral manager on hci1 advertising, and the central connected to it.
    static func connected() async throws -> (CentralRig, PeripheralManager, Peripheral, String) {
        let rig = try await CentralRig.start(adapters: 2, experimental: true)
        let manager = PeripheralManager(adapter: "hci1", session: rig.simulator.session())
        try await manager.whenPoweredOn(timeout: .seconds(5)).value
        try await manager.startAdvertising("Echo", uuids: []).value
        let address = try need(rig.simulator.adapterAddress(1), "hci1's address")
        let peripheral = try await rig.manager.connect(address: address, timeout: .seconds(10)).value
        return (rig, manager, peripheral, address)
    }

    @Test("publish (kernel-style PSM 0x80 first), open from the central, 200 kB echoed intact; the central closing is seen by the peripheral as .remote")
    func echoAndRemoteClose() async throws {
        let (rig, manager, peripheral, address) = try await Self.connected()
        defer { rig.stop() }
        let publication = try await manager.publishL2CAPChannel().value
        #expect(publication.psm == 0x80)
        #expect(publication.address == address)
        let accepted = Collector<L2CAPChannel>()
        publication.channels.onSuccess(context: .immediate) { accepted.append($0) }

        let channel = try await peripheral.openL2CAPChannel(psm: publication.psm).value
        #expect(channel.sendMTU == 672 && channel.remoteAddress == address)
        let served = try await accepted.wait(for: 1, timeout: .seconds(5))[0]
        #expect(served.psm == publication.psm)
        let echo = Task {
            for try await sdu in served.received { try await served.send(sdu).value }
        }
        let data = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        async let sent: Void = {
            var offset = 0
            while offset < data.count {
                try await channel.send(Data(data[offset..<min(offset + 5000, data.count)])).value
                offset += 5000
            }
        }()
        var back = Data()
        for try await sdu in channel.received {
            #expect(sdu.count <= 672)
            back.append(sdu)
            if back.count >= data.count { break }
        }
        try await sent
        #expect(back == data)
        channel.close()
        #expect(try await served.whenClosed().value == .remote)
        try await echo.value
        publication.unpublish()
        manager.stopAdvertising()
    }

    @Test("a PSM taken twice: .alreadyExists naming the PSM; after unpublish, opening it is refused with .connectionAttemptFailed naming the PSM and the address")
    func takenAndRefused() async throws {
        let (rig, manager, peripheral, address) = try await Self.connected()
        defer { rig.stop() }
        let first = try await manager.publishL2CAPChannel(psm: 0x0085).value
        do {
            _ = try await manager.publishL2CAPChannel(psm: 0x0085).value
            Issue.record("the same PSM published twice")
        } catch let error as BlueCapError {
            #expect(error.kind == .alreadyExists && error.message.contains("PSM 133"), "\(error)")
        }
        first.unpublish()
        #expect(!first.isPublished)
        do {
            _ = try await peripheral.openL2CAPChannel(psm: 0x0085).value
            Issue.record("a channel opened to an unpublished PSM")
        } catch let error as BlueCapError {
            #expect(error.kind == .connectionAttemptFailed, "\(error)")
            #expect(error.message.contains("no channel published on PSM 133") && error.message.contains(address), "\(error)")
        }
        manager.stopAdvertising()
    }

    @Test("accepting: a central the app refuses gets its channel closed at once (seen as .remote), is never delivered and is counted; one it accepts is delivered")
    func acceptingCheck() async throws {
        let (rig, manager, peripheral, _) = try await Self.connected()
        defer { rig.stop() }
        let central = try need(rig.simulator.adapterAddress(0), "hci0's address")
        let asked = Collector<String>()
        let refusing = try await manager.publishL2CAPChannel(psm: 0x0086, accepting: { address in
            asked.append(address)
            return false
        }).value
        let delivered = Collector<L2CAPChannel>()
        refusing.channels.onSuccess(context: .immediate) { delivered.append($0) }
        let refused = try await peripheral.openL2CAPChannel(psm: 0x0086).value
        #expect(try await refused.whenClosed().value == .remote)
        #expect(asked.items == [central])
        #expect(refusing.refusedCount == 1)
        #expect(delivered.items.isEmpty)
        refusing.unpublish()

        let admitting = try await manager.publishL2CAPChannel(psm: 0x0087, accepting: { $0 == central }).value
        admitting.channels.onSuccess(context: .immediate) { delivered.append($0) }
        let channel = try await peripheral.openL2CAPChannel(psm: 0x0087).value
        let served = try await delivered.wait(for: 1, timeout: .seconds(5))[0]
        #expect(served.remoteAddress == central && admitting.refusedCount == 0)
        try await channel.send(Data([1, 2, 3])).value
        #expect(try await served.receive().value == Data([1, 2, 3]))
        channel.close()
        admitting.unpublish()
        manager.stopAdvertising()
    }
}
