// NotificationSocket: the AcquireNotify socket's reader, on a local socket pair.
@testable import BlueCapKit
import DBus
import Dispatch
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("NotificationSocket: datagrams in, end of file, closing from our side")
struct NotificationSocketTests {
    /// A reader on one end of a SOCK_SEQPACKET pair (it holds the only reference to its
    /// descriptor, as after AcquireNotify) and the other end, which plays bluetoothd.
    private func reader(onData: @escaping @Sendable (Data) -> Void,
                        onClose: @escaping @Sendable () -> Void) throws -> (socket: NotificationSocket, peer: Int32) {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec: a daemon another test spawns meanwhile must not inherit the peer, or
        // closing it here would not end the reader.
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        let socket = NotificationSocket(fd: FileDescriptor(taking: fds[0]), mtu: 23, queue: DispatchQueue(label: "test.notify"),
                                        onData: onData, onClose: onClose)
        return (socket, fds[1])
    }

    @Test("each datagram arrives once; the peer closing ends the reader once")
    func datagramsThenEndOfFile() async throws {
        let data = Collector<[UInt8]>()
        let ends = Collector<Bool>()
        let (socket, peer) = try reader(onData: { data.append([UInt8]($0)) }, onClose: { ends.append(true) })
        socket.start()
        for byte: UInt8 in 1...3 { _ = withUnsafeBytes(of: byte) { send(peer, $0.baseAddress, 1, 0) } }
        #expect(try await data.wait(for: 3) == [[1], [2], [3]])
        close(peer)
        try await ends.wait(for: 1)
        #expect(ends.items == [true])
        withExtendedLifetime(socket) {}
    }

    @Test("close() ends the session at once: the peer sees end of file while the reader still exists")
    func closeFromOurSide() async throws {
        let ends = Collector<Bool>()
        let (socket, peer) = try reader(onData: { _ in }, onClose: { ends.append(true) })
        socket.start()
        socket.close()
        // The peer's blocking read returns 0 (end of file) once our end is closed; on a thread of
        // its own, bounded by a receive timeout.
        let peerSaw = Collector<Int>()
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        Thread.detachNewThread {
            var byte: UInt8 = 0
            peerSaw.append(recv(peer, &byte, 1, 0))
        }
        #expect(try await peerSaw.wait(for: 1, timeout: .seconds(10)) == [0])
        #expect(ends.items.isEmpty, "onClose is for the peer's close, not ours")
        withExtendedLifetime(socket) {}
        close(peer)
    }
}
