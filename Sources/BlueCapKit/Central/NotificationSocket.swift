// NotificationSocket: the AcquireNotify socket, read on a DispatchSource.
import DBus
import Dispatch
import Foundation
import Glibc
import Synchronization
import Locking

/// Reads the SOCK_SEQPACKET socket `AcquireNotify` returns: each datagram is one notification.
/// Reading is event driven (a `DispatchSourceRead`); end of file or an error ends it, and
/// `close()` ends it from our side (which is how a client stops an acquired notification).
///
/// `@unchecked Sendable`: `source` is set once in `init`; a dispatch source's `cancel()` is
/// thread-safe, and `closed` (an atomic) makes sure it runs once.
///
/// Equal only to itself (the notification state machine tells one socket from another).
final class NotificationSocket: Equatable, @unchecked Sendable {
    private let source: any DispatchSourceRead
    private let closed = OnceFlag()
    /// The MTU BlueZ reported.
    let mtu: UInt16

    /// Prepares reading `fd` on `queue` (``start()`` begins); `onData` gets each datagram, `onClose` runs once at the end
    /// (not when ``close()`` is called by us).
    init(fd: FileDescriptor, mtu: UInt16, queue: DispatchQueue,
         onData: @escaping @Sendable (Data) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.mtu = mtu
        let raw = fd.rawValue
        let flags = fcntl(raw, F_GETFL)
        _ = fcntl(raw, F_SETFL, flags | O_NONBLOCK)
        source = DispatchSource.makeReadSource(fileDescriptor: raw, queue: queue)
        let closed = self.closed
        let capacity = max(Int(mtu), 517) + 8
        let source = self.source
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: capacity)
            var more = true
            while more {
                // Up to 64 datagrams per wake batch: an async consumer of the notifications
                // wakes once per batch (never behind more than 64), not once per datagram.
                more = WakeBatch.run { () -> Bool in
                    for _ in 0..<64 {
                        let n = buffer.withUnsafeMutableBytes { recv(raw, $0.baseAddress, capacity, Int32(MSG_DONTWAIT)) }
                        if n > 0 {
                            onData(Data(buffer[0..<n]))
                            continue
                        }
                        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return false }
                        // 0: the peer closed (link lost, StopNotify); < 0: a socket error.
                        if closed.trySet() {
                            source.cancel()
                            onClose()
                        }
                        return false
                    }
                    return true
                }
            }
        }
        // The socket stays open until the source is cancelled (by ``close()`` or end of file),
        // then closes at once: the source keeps its handlers, so the handler must let go of
        // the descriptor rather than merely capture it.
        let owner = SocketOwner(fd)
        source.setCancelHandler { owner.release() }
    }

    /// Starts delivering (call once, after recording the socket).
    func start() { source.resume() }

    /// Closes the socket from our side (ends the notification session). Idempotent.
    func close() {
        guard closed.trySet() else { return }
        source.cancel()
    }

    deinit { close() }

    /// Identity: the same socket.
    static func == (a: NotificationSocket, b: NotificationSocket) -> Bool { a === b }
}

/// The last owner of the notification socket until its reader is cancelled.
private final class SocketOwner: Sendable {
    private let fd: Locked<FileDescriptor?>
    init(_ fd: FileDescriptor) { self.fd = Locked(fd) }
    /// Drops the descriptor, which closes it.
    func release() { fd.withLock { $0 = nil } }
}

/// A flag that is set once; `trySet()` returns true for the first caller only.
final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Sets the flag; true when this call set it.
    func trySet() -> Bool { !value.exchange(true, ordering: .sequentiallyConsistent) }
    /// Whether the flag is set.
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
