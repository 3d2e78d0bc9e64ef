// Real BlueZ: L2CAP connection-oriented channels (LE credit-based) between hci0 and hci1,
// through the kernel's L2CAP sockets, with the bytes checked and the throughput printed.
import BlueCapKit
import Foundation
import Testing
import TestSupport

extension RealBlueZTests {
    /// Nested in ``RealBlueZTests`` so that its `.serialized` holds (the VM's adapters are shared).
    @Suite("Real BlueZ: L2CAP channels")
    struct VML2CAPTests {
        static let size = 1 << 20

        /// `count` bytes that are not a repeating pattern of any short period.
        static func payload(_ count: Int) -> Data {
            var x: UInt32 = 0x1234_5678
            return Data((0..<count).map { _ in
                x ^= x << 13; x ^= x >> 17; x ^= x << 5
                return UInt8(truncatingIfNeeded: x)
            })
        }

        /// Moves `data` from `from` to `to` in windows of 32 kB: each window is sent (sends of
        /// 4 kB, each awaited), then read. Linux 6.1 (the VM's kernel) returns LE credits as SDUs
        /// arrive, not as the app reads them: a sender that runs ahead of a slow reader by more
        /// than the receiving socket's buffer gets SDUs delivered out of order (seen with
        /// unbounded sends on all three releases: an SDU holding bytes sent 5 to 25 SDUs later).
        /// A window well under the buffer (212 kB) keeps the test about our code.
        /// Returns the bytes read and where the first SDU that differs arrived.
        static func move(_ data: Data, from: L2CAPChannel, to: L2CAPChannel) async throws -> (bytes: Data, firstWrong: Int?) {
            var got = Data()
            got.reserveCapacity(data.count)
            var wrong: Int?
            var offset = 0
            while offset < data.count {
                let windowEnd = min(offset + 32 * 1024, data.count)
                while offset < windowEnd {
                    let end = min(offset + 4096, windowEnd)
                    try await from.send(Data(data[offset..<end])).value
                    offset = end
                }
                while got.count < windowEnd {
                    let sdu = try await to.receive().value
                    #expect(sdu.count <= to.receiveMTU)
                    if wrong == nil, sdu != data[got.count..<min(got.count + sdu.count, data.count)] { wrong = got.count }
                    got.append(sdu)
                }
            }
            return (got, wrong)
        }

        static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

        @Test("a central on hci0 opens a channel to the PSM the kernel chose on hci1; 1 MB goes each way, byte for byte; the central closing is seen by the peripheral",
              .timeLimit(.minutes(8)))
        func megabyteEachWay() async throws {
            try await Pair.with { pair in
                let publication = try await pair.peripheral.publishL2CAPChannel().value
                #expect((0x80...0xFF).contains(publication.psm), "a dynamic LE PSM: \(publication.psm)")
                #expect(publication.address == pair.peripheralAddress)
                let accepted = Collector<L2CAPChannel>()
                publication.channels.onSuccess(context: .immediate) { accepted.append($0) }

                let p = try await pair.discover()
                let channel = try await p.openL2CAPChannel(psm: publication.psm, timeout: .seconds(60)).value
                let served = try await accepted.wait(for: 1, timeout: .seconds(30))[0]
                #expect(served.remoteAddress == pair.centralAddress)
                #expect(channel.remoteAddress == pair.peripheralAddress)
                #expect(channel.sendMTU > 23 && channel.receiveMTU > 23, "\(channel)")
                let up = Self.payload(Self.size), down = Data(up.reversed())
                let clock = ContinuousClock()
                var t0 = clock.now
                let atPeripheral = try await Self.move(up, from: channel, to: served)
                let upSeconds = Self.seconds(clock.now - t0)
                #expect(atPeripheral.bytes == up, "central → peripheral: first wrong SDU at \(atPeripheral.firstWrong.map(String.init) ?? "none")")
                t0 = clock.now
                let atCentral = try await Self.move(down, from: served, to: channel)
                let downSeconds = Self.seconds(clock.now - t0)
                #expect(atCentral.bytes == down, "peripheral → central: first wrong SDU at \(atCentral.firstWrong.map(String.init) ?? "none")")
                print(String(format: "vm l2cap, BlueZ %@: 1 MB central → peripheral in %.1f s (%.1f kB/s), 1 MB peripheral → central in %.1f s (%.1f kB/s); send MTU %d, receive MTU %d",
                             VM.bluezVersion, upSeconds, Double(Self.size) / upSeconds / 1000, downSeconds, Double(Self.size) / downSeconds / 1000,
                             channel.sendMTU, channel.receiveMTU))

                channel.close()
                #expect(try await served.whenClosed().value == .remote)
                #expect(try await channel.whenClosed().value == .local)
                publication.unpublish()
                p.disconnect()
            }
        }

        @Test("the peripheral closing its end is seen by the central: its stream of SDUs ends and its close reason is .remote; then opening to an unpublished PSM is refused with a message naming the PSM and the address",
              .timeLimit(.minutes(4)))
        func remoteCloseAndRefusal() async throws {
            try await Pair.with { pair in
                let publication = try await pair.peripheral.publishL2CAPChannel(psm: 0x0091).value
                #expect(publication.psm == 0x0091)
                let accepted = Collector<L2CAPChannel>()
                publication.channels.onSuccess(context: .immediate) { accepted.append($0) }
                let p = try await pair.discover()
                let channel = try await p.openL2CAPChannel(psm: 0x0091, timeout: .seconds(60)).value
                let served = try await accepted.wait(for: 1, timeout: .seconds(30))[0]
                try await served.send(Data("last words".utf8)).value
                served.close()
                var got: [Data] = []
                for try await sdu in channel.received { got.append(sdu) }
                #expect(got == [Data("last words".utf8)], "what was sent before the close arrives, then the stream ends")
                #expect(try await channel.whenClosed().value == .remote)
                await #expect(throws: BlueCapError.self) { try await channel.send(Data([1])).value }
                publication.unpublish()

                do {
                    _ = try await p.openL2CAPChannel(psm: 0x0093, timeout: .seconds(60)).value
                    Issue.record("a channel opened to a PSM nothing listens on")
                } catch let error as BlueCapError {
                    #expect(error.kind == .connectionAttemptFailed, "\(error)")
                    #expect(error.message.contains("PSM 147") && error.message.contains(pair.peripheralAddress), "\(error)")
                    print("vm l2cap, BlueZ \(VM.bluezVersion): unpublished PSM: \(error)")
                }
                p.disconnect()
            }
        }

        @Test("after pairing (Just Works), a channel published with security .medium opens from a central asking .medium: the link is encrypted and 4 kB go each way",
              .timeLimit(.minutes(4)))
        func encryptedChannel() async throws {
            try await PairingRig.with(capability: .noInputNoOutput) { rig in
                let publication = try await rig.pair.peripheral.publishL2CAPChannel(security: .medium).value
                #expect(publication.security == .medium)
                let accepted = Collector<L2CAPChannel>()
                publication.channels.onSuccess(context: .immediate) { accepted.append($0) }
                // As VMPairingTests: connected with the services resolved (the secure service
                // found) before pair(); on 5.82 a pair() right after the connection got no answer.
                let (p, _) = try await rig.connectAndFind()
                rig.peripheralAllows.store(true, ordering: .sequentiallyConsistent)
                try await withDeadline(.seconds(60), "pair") { try await p.pair().value }
                #expect(p.isPaired)

                let channel = try await p.openL2CAPChannel(psm: publication.psm, security: .medium, timeout: .seconds(60)).value
                let served = try await accepted.wait(for: 1, timeout: .seconds(30))[0]
                let data = Self.payload(4096)
                let atPeripheral = try await Self.move(data, from: channel, to: served)
                #expect(atPeripheral.bytes == data)
                let back = Data(data.reversed())
                let atCentral = try await Self.move(back, from: served, to: channel)
                #expect(atCentral.bytes == back)
                print("vm l2cap, BlueZ \(VM.bluezVersion): encrypted channel (BT_SECURITY medium) after pairing: 4 kB each way")
                channel.close()
                #expect(try await served.whenClosed().value == .remote)
                publication.unpublish()
                try await rig.disconnect(p)
            }
        }
    }
}
