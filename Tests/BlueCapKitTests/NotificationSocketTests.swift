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
    /// A reader (read by `connection`'s owner thread) on one end of a SOCK_SEQPACKET pair (it holds the only reference to its
    /// descriptor, as after AcquireNotify) and the other end, which plays bluetoothd.
    private func reader(on connection: Connection, onData: @escaping @Sendable (Data) -> Void,
                        onClose: @escaping @Sendable () -> Void) throws -> (socket: NotificationSocket, peer: Int32) {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec: a daemon another test spawns meanwhile must not inherit the peer, or
        // closing it here would not end the reader.
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        let socket = NotificationSocket(fd: FileDescriptor(taking: fds[0]), mtu: 23, connection: connection,
                                        onData: onData, onClose: onClose)
        return (socket, fds[1])
    }

    @Test("each datagram arrives once; the peer closing ends the reader once")
    func datagramsThenEndOfFile() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let data = Collector<[UInt8]>()
            let onOwner = Collector<Bool>()
            let ends = Collector<Bool>()
            let (socket, peer) = try reader(on: connection, onData: {
                // Before the data: the test waits for the data, then reads this.
                onOwner.append(connection.isOnOwnerThread)
                data.append([UInt8]($0))
            }, onClose: { ends.append(true) })
            // Nothing is read before start(): the state machine records the socket first.
            _ = withUnsafeBytes(of: UInt8(9)) { send(peer, $0.baseAddress, 1, 0) }
            let roundTrip = Collector<Bool>()
            connection.execute { roundTrip.append(true) }
            try await roundTrip.wait(for: 1)
            #expect(data.items.isEmpty)
            socket.start()
            for byte: UInt8 in 1...3 { _ = withUnsafeBytes(of: byte) { send(peer, $0.baseAddress, 1, 0) } }
            #expect(try await data.wait(for: 4) == [[9], [1], [2], [3]])
            #expect(onOwner.items == [true, true, true, true], "read on the connection's owner thread: one wake-up per datagram")
            close(peer)
            try await ends.wait(for: 1)
            #expect(ends.items == [true])
            withExtendedLifetime(socket) {}
        }
    }

    @Test("more datagrams than one wake reads: all arrive, in order")
    func longBacklog() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let data = Collector<UInt16>()
            let (socket, peer) = try reader(on: connection, onData: { d in data.append(d.withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) }) },
                                            onClose: {})
            defer { close(peer) }
            let count = NotificationSocket.datagramsPerWake * 3 + 5
            socket.start()
            // From a thread of its own: the socket's buffer holds fewer datagrams than this, so
            // the sender blocks while the reader drains, and the reader finds backlogs.
            Thread.detachNewThread {
                for n in 0..<count { _ = withUnsafeBytes(of: UInt16(n)) { send(peer, $0.baseAddress, 2, 0) } }
            }
            #expect(try await data.wait(for: count) == (0..<count).map { UInt16($0) })
            withExtendedLifetime(socket) {}
        }
    }

    @Test("the connection closing ends the reader: onClose once")
    func connectionClosing() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let ends = Collector<Bool>()
            let (socket, peer) = try reader(on: connection, onData: { _ in }, onClose: { ends.append(true) })
            defer { close(peer) }
            socket.start()
            connection.close()
            try await ends.wait(for: 1)
            socket.close()
            #expect(ends.items == [true])
        }
    }

    @Test("close() ends the session at once: the peer sees end of file while the reader still exists")
    func closeFromOurSide() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let ends = Collector<Bool>()
            let (socket, peer) = try reader(on: connection, onData: { _ in }, onClose: { ends.append(true) })
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
}
