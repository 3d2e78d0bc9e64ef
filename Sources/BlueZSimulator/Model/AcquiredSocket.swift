// AcquiredSocket: the SOCK_SEQPACKET pair behind AcquireNotify/AcquireWrite.

import Dispatch
import Glibc

// MARK: - AcquiredSocket

/// The simulator's end of a socketpair handed to a client by AcquireNotify/AcquireWrite.
/// One datagram per notification (or per written value). When the client closes its end the
/// read source sees EOF and `onClose` runs on the simulator's queue.
final class AcquiredSocket {
    let fd: Int32
    private var source: DispatchSourceRead?
    private var closed = false

    /// Creates the pair; returns the simulator's socket and the client's fd (owned by the caller).
    static func make(queue: DispatchQueue, onDatagram: @escaping ([UInt8]) -> Void,
                     onClose: @escaping () -> Void) throws(BlueZErrorReply) -> (AcquiredSocket, Int32) {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw .failed(String(cString: strerror(errno)))
        }
        return (adopt(fds[0], queue: queue, onDatagram: onDatagram, onClose: onClose), fds[1])
    }

    /// Reads `fd` (owned from now on: closed with the socket): an application's end handed over
    /// by its `AcquireNotify` reply, as bluetoothd reads it.
    static func adopt(_ fd: Int32, queue: DispatchQueue, onDatagram: @escaping ([UInt8]) -> Void,
                      onClose: @escaping () -> Void) -> AcquiredSocket {
        let socket = AcquiredSocket(fd: fd)
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak socket] in
            guard let socket, !socket.closed else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(socket.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                onDatagram(Array(buffer[..<n]))
            } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                socket.close()
                onClose()
            }
        }
        source.setCancelHandler { _ = Glibc.close(fd) }
        source.resume()
        socket.source = source
        return socket
    }

    private init(fd: Int32) { self.fd = fd }

    /// Sends one datagram without blocking; false when the client is not reading fast enough
    /// (the datagram is dropped, as a full ATT socket would) or is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        guard !closed else { return false }
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) } == bytes.count
    }

    /// Sends one datagram, waiting up to `timeout` for room when the client's buffer is full
    /// (used by bursts, which must not lose values). False when the client is gone or stuck: a
    /// client that reads nothing for 5 s is stuck (a sanitized build under load can pause its
    /// reader for over a second, so a shorter wait would count slowness as a loss).
    @discardableResult
    func sendWaiting(_ bytes: [UInt8], timeout: Duration = .seconds(5)) -> Bool {
        while !closed {
            if send(bytes) { return true }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { return false }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&p, 1, Int32(timeout.nanoseconds / 1_000_000)) > 0, p.revents & Int16(POLLOUT) != 0 else { return false }
        }
        return false
    }

    /// Closes the simulator's end (the client sees HUP).
    func close() {
        guard !closed else { return }
        closed = true
        if let source {
            source.cancel()  // the cancel handler closes the fd once the source lets go of it
        } else {
            _ = Glibc.close(fd)
        }
        source = nil
    }

    deinit { close() }
}
