// L2CAPChannel over a connected SOCK_SEQPACKET pair: the same send/receive/close paths the
// kernel's L2CAP sockets take (SDU boundaries, end of file, EAGAIN), without Bluetooth.
import Foundation
import Futures
import Glibc
import Testing
@testable import BlueCapKit

@Suite("L2CAP channel over a socket pair")
struct L2CAPChannelTests {
    /// Two channels joined by a Unix `SOCK_SEQPACKET` pair, as a central's and a peripheral's.
    static func pair(mtu: Int = 100, capacity: Int = 4) throws -> (L2CAPChannel, L2CAPChannel) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
        return (L2CAPChannel(fd: fds[0], remoteAddress: "00:AA:01:00:00:01", psm: 0x80, sendMTU: mtu, receiveMTU: mtu, capacity: capacity),
                L2CAPChannel(fd: fds[1], remoteAddress: "00:AA:01:01:00:01", psm: 0x80, sendMTU: mtu, receiveMTU: mtu, capacity: capacity))
    }

    static func bytes(_ n: Int, seed: UInt8 = 1) -> Data { Data((0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }) }

    @Test("a send larger than the MTU arrives as SDUs of at most the MTU, in order, byte for byte")
    func sendSplitsAtMTU() async throws {
        let (a, b) = try Self.pair(mtu: 100)
        let data = Self.bytes(1_050)
        try await a.send(data).value
        var sizes: [Int] = [], got = Data()
        while got.count < data.count {
            let sdu = try await b.receive().value
            sizes.append(sdu.count)
            got.append(sdu)
        }
        #expect(sizes == Array(repeating: 100, count: 10) + [50])
        #expect(got == data)
    }

    @Test("1 MB each way at once through capacities of 4: everything arrives, in order (the slow reader holds the sender back, nothing is dropped)")
    func bothWaysWithBackpressure() async throws {
        let (a, b) = try Self.pair(mtu: 672, capacity: 4)
        let one = Self.bytes(1024 * 1024, seed: 3), two = Self.bytes(1024 * 1024, seed: 7)
        func pump(_ from: L2CAPChannel, _ data: Data) async throws {
            var offset = 0
            while offset < data.count {
                try await from.send(data[offset..<min(offset + 4096, data.count)]).value
                offset += 4096
            }
        }
        func drain(_ into: L2CAPChannel, _ count: Int) async throws -> Data {
            var got = Data()
            for try await sdu in into.received {
                got.append(sdu)
                if got.count >= count { break }
            }
            return got
        }
        async let s1: Void = pump(a, one)
        async let s2: Void = pump(b, two)
        async let r1 = drain(b, one.count)
        async let r2 = drain(a, two.count)
        try await s1
        try await s2
        #expect(try await r1 == one)
        #expect(try await r2 == two)
        #expect(b.state.withLock { $0.buffered.count } <= 4)
    }

    @Test("more outstanding sends than the capacity: the one beyond fails at once with .busy")
    func sendsBeyondCapacityAreBusy() async throws {
        let (a, b) = try Self.pair(mtu: 64 * 1024, capacity: 2)
        // Big SDUs into a peer that does not read: the socket fills and sends stay outstanding.
        let big = Data(count: 60 * 1024)
        var futures: [Future<Void>] = []
        var busy: BlueCapError?
        for _ in 0..<64 {
            let f = a.send(big)
            futures.append(f)
            if case .failure(let e as BlueCapError)? = f.result { busy = e; break }
        }
        #expect(busy?.kind == .busy, "\(String(describing: busy))")
        #expect(busy?.message.contains("await one before sending more") == true)
        b.close()
        _ = try await a.whenClosed().value
    }

    @Test("the remote closing: SDUs sent before arrive, then receive fails with .disconnected, the stream ends, the reason is .remote")
    func remoteCloseIsSeen() async throws {
        let (a, b) = try Self.pair()
        try await b.send(Data("bye".utf8)).value
        b.close()
        var got: [Data] = []
        for try await sdu in a.received { got.append(sdu) }
        #expect(got == [Data("bye".utf8)])
        #expect(try await a.whenClosed().value == .remote)
        #expect(try await b.whenClosed().value == .local)
        #expect(!a.isOpen)
        await #expect(throws: BlueCapError.self) { try await a.receive().value }
        await #expect(throws: BlueCapError.self) { try await a.send(Data([1])).value }
    }

    @Test("closing here fails the receive that waits, with .disconnected naming the local close")
    func localCloseFailsWaitingReceive() async throws {
        let (a, b) = try Self.pair()
        // `b` kept open: released, it would close and `a` would see the remote close first.
        defer { withExtendedLifetime(b) {} }
        let pending = a.receive()
        a.close()
        do {
            _ = try await pending.value
            Issue.record("a receive completed on a closed channel")
        } catch let error as BlueCapError {
            #expect(error.kind == .disconnected)
            #expect(error.message.contains("closed here"))
        }
        #expect(try await a.whenClosed().value == .local)
    }
}
