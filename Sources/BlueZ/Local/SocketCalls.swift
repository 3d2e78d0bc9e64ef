// SocketCalls: every socket system call of the GATT server sockets, in one thin gateway.
import Glibc

/// The socket calls behind `AcquireNotify`/`AcquireWrite` served by this process: one place
/// where the C calls are made and `errno` is read.
enum SocketCalls {
    /// What a non-blocking send did.
    enum SendResult: Equatable {
        /// The whole datagram was queued.
        case sent
        /// The peer's buffer is full (`EAGAIN`): the datagram was not sent.
        case full
        /// The peer is gone (`EPIPE`, `ECONNRESET`, …: errno given).
        case closed(Int32)
    }

    /// What a non-blocking receive got.
    enum ReceiveResult: Equatable {
        /// One datagram.
        case datagram([UInt8])
        /// Nothing to read now (`EAGAIN`).
        case empty
        /// End of file or an error: the peer is gone.
        case closed
    }

    /// A connected pair of `SOCK_SEQPACKET` Unix sockets (close-on-exec), both non-blocking.
    static func seqpacketPair() throws(BlueZError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw BlueZError(kind: .failed, message: "socketpair: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// Sends `bytes` as one datagram without blocking and without SIGPIPE.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SendResult {
        let n = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        if n == bytes.count { return .sent }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .full }
        return .closed(n < 0 ? errno : 0)
    }

    /// Receives one datagram of at most `capacity` bytes without blocking.
    static func receive(_ fd: Int32, capacity: Int) -> ReceiveResult {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, capacity, Int32(MSG_DONTWAIT)) }
        if n > 0 { return .datagram(Array(buffer[..<n])) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .empty }
        return .closed
    }

    /// Whether the peer has closed its end of `fd` (`POLLHUP`), without waiting.
    static func peerClosed(_ fd: Int32) -> Bool {
        // POLLHUP, POLLERR and POLLNVAL are reported whatever the events asked for.
        var entry = pollfd(fd: fd, events: 0, revents: 0)
        guard poll(&entry, 1, 0) == 1 else { return false }
        return entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }

    /// Closes `fd`.
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }
}
