// DescriptorWatch: descriptors read in the owner thread's poll set, and how a watch ends.
import DBus
import Foundation
import Glibc
import Testing
import TestSupport
import Locking

@Suite("Descriptor watches: input read on the owner thread")
struct DescriptorWatchTests {
    /// A SOCK_SEQPACKET pair: the first end for the watch (non-blocking; the test hands it to
    /// the watch as its only owner), the second for the test.
    private func socketPair() throws -> (watched: Int32, peer: Int32) {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec: a daemon another test spawns meanwhile must not inherit an end.
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (fds[0], fds[1])
    }

    private func send(_ peer: Int32, _ byte: UInt8) {
        _ = withUnsafeBytes(of: byte) { Glibc.send(peer, $0.baseAddress, 1, 0) }
    }

    /// Reads every datagram waiting on `fd`: the bytes, or nil at end of file.
    private static func drain(_ fd: Int32) -> [UInt8]? {
        var out: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
            if n == 1 { out.append(byte); continue }
            return n == 0 ? nil : out
        }
    }

    /// Whether the peer sees our end closed within five seconds: end of file, or a reset when
    /// our end had unread datagrams.
    private func peerSeesEndOfFile(_ peer: Int32) async throws -> Bool {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let saw = Collector<Int>()
        Thread.detachNewThread {
            var byte: UInt8 = 0
            let n = recv(peer, &byte, 1, 0)
            saw.append(n == 0 || (n < 0 && errno == ECONNRESET) ? 0 : 1)
        }
        return try await saw.wait(for: 1, timeout: .seconds(10)) == [0]
    }

    @Test("the handler runs on the owner thread for each datagram; returning false ends the watch and closes the descriptor")
    func readsOnOwnerThreadUntilHandlerStops() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let (raw, peer) = try socketPair()
            defer { close(peer) }
            let read = Collector<UInt8>()
            let onOwner = Locked<[Bool]>([])
            let closedCalls = Locked(0)
            let watch = connection.watchInput(of: FileDescriptor(taking: raw), onReadable: {
                onOwner.withLock { $0.append(connection.isOnOwnerThread) }
                guard let bytes = Self.drain(raw) else { return false }
                for b in bytes { read.append(b) }
                return !bytes.contains(0xFF)
            }, onConnectionClosed: { closedCalls.withLock { $0 += 1 } })
            for b: UInt8 in [1, 2, 3] { send(peer, b) }
            #expect(try await read.wait(for: 3) == [1, 2, 3])
            #expect(watch.isActive)
            send(peer, 0xFF)
            try await read.wait(for: 4)
            #expect(try await peerSeesEndOfFile(peer), "the watch released the only reference: the descriptor is closed")
            #expect(onOwner.withLock { $0 }.allSatisfy { $0 })
            // Ended: a later datagram cannot be read (the peer's sends fail), and closing the
            // connection does not report the ended watch.
            connection.close()
            #expect(closedCalls.withLock { $0 } == 0)
            #expect(read.items == [1, 2, 3, 0xFF])
        }
    }

    @Test("cancel() stops the handler and closes the descriptor; onConnectionClosed does not run")
    func cancelFromAnotherThread() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let (raw, peer) = try socketPair()
            defer { close(peer) }
            let read = Collector<UInt8>()
            let closedCalls = Locked(0)
            let watch = connection.watchInput(of: FileDescriptor(taking: raw), onReadable: {
                for b in Self.drain(raw) ?? [] { read.append(b) }
                return true
            }, onConnectionClosed: { closedCalls.withLock { $0 += 1 } })
            send(peer, 7)
            try await read.wait(for: 1)
            watch.cancel()
            #expect(!watch.isActive)
            #expect(try await peerSeesEndOfFile(peer))
            watch.cancel()
            connection.close()
            #expect(closedCalls.withLock { $0 } == 0)
            #expect(read.items == [7])
        }
    }

    @Test("cancel() inside the handler: the descriptor stays open until the handler returns, and the handler does not run again")
    func cancelInsideHandler() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let (raw, peer) = try socketPair()
            defer { close(peer) }
            let calls = Collector<Bool>()
            let box = Locked<DescriptorWatch?>(nil)
            let watch = connection.watchInput(of: FileDescriptor(taking: raw), onReadable: {
                guard let watch = box.withLock({ $0 }) else { return true }
                watch.cancel()
                // Still ours: the descriptor is open after cancel() while this handler runs.
                let open = fcntl(raw, F_GETFD) >= 0
                calls.append(open)
                return true
            }, onConnectionClosed: {})
            box.withLock { $0 = watch }
            send(peer, 1)
            #expect(try await calls.wait(for: 1) == [true])
            #expect(try await peerSeesEndOfFile(peer))
            // Unread input would make a live watch's handler run again at once; it did not.
            // A round trip through the owner thread, after which a second call would have run.
            let roundTrip = Collector<Bool>()
            connection.execute { roundTrip.append(true) }
            try await roundTrip.wait(for: 1)
            #expect(calls.items == [true])
        }
    }

    @Test("the connection closing ends an active watch: onConnectionClosed once, the descriptor closed")
    func connectionCloseEndsWatch() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            let (raw, peer) = try socketPair()
            defer { close(peer) }
            let ended = Collector<Bool>()
            let watch = connection.watchInput(of: FileDescriptor(taking: raw), onReadable: { true }, onConnectionClosed: { ended.append(connection.isOnOwnerThread) })
            connection.close()
            #expect(try await ended.wait(for: 1) == [true])
            #expect(try await peerSeesEndOfFile(peer))
            watch.cancel()
            #expect(ended.items.count == 1)
        }
    }

    @Test("watching on a closed connection ends at once on the caller's thread")
    func watchOnClosedConnection() async throws {
        try await withTestBus { bus in
            let connection = try bus.connect()
            connection.close()
            let (raw, peer) = try socketPair()
            defer { close(peer) }
            let ended = Locked(0)
            let handled = Locked(0)
            let watch = connection.watchInput(of: FileDescriptor(taking: raw), onReadable: { handled.withLock { $0 += 1 }; return true },
                                              onConnectionClosed: { ended.withLock { $0 += 1 } })
            #expect(ended.withLock { $0 } == 1)
            #expect(!watch.isActive)
            #expect(try await peerSeesEndOfFile(peer))
            #expect(handled.withLock { $0 } == 0)
        }
    }

    @Test("bus traffic goes on while watched descriptors are busy")
    func busTrafficInterleaves() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([echoInterface(signature: "s")], at: "/t")
            defer { h.unexport() }
            let (raw, peer) = try socketPair()
            defer { close(peer) }
            let read = Collector<UInt8>()
            // A handler that reads one datagram per call: the poll comes back for each.
            let watch = client.watchInput(of: FileDescriptor(taking: raw), onReadable: {
                var byte: UInt8 = 0
                if recv(raw, &byte, 1, Int32(MSG_DONTWAIT)) == 1 { read.append(byte) }
                return true
            }, onConnectionClosed: {})
            defer { watch.cancel() }
            for n in 0..<200 { send(peer, UInt8(n & 0x7F)) }
            let reply = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.Test",
                                              member: "Echo", arguments: [.string("still here")])
            #expect(reply.body == [.string("still here")])
            #expect(try await read.wait(for: 200) == (0..<200).map { UInt8($0 & 0x7F) })
        }
    }
}
