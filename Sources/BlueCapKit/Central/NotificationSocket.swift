// NotificationSocket: the AcquireNotify socket, read on a DispatchSource.
import DBus
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Reads the SOCK_SEQPACKET socket `AcquireNotify` returns: each datagram is one notification.
/// Reading is event driven (a `DispatchSourceRead`); end of file or an error ends it, and
/// `close()` ends it from our side (which is how a client stops an acquired notification).
///
/// `@unchecked Sendable`: `source` is set once in `init`; a dispatch source's `cancel()` is
/// thread-safe, and `closed` (an atomic) makes sure it runs once.
final class NotificationSocket: @unchecked Sendable {
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
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(raw, $0.baseAddress, capacity, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    onData(Data(buffer[0..<n]))
                    continue
                }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
                // 0: the peer closed (link lost, StopNotify); < 0: a socket error.
                if !closed.trySet() {
                    source.cancel()
                    onClose()
                }
                return
            }
        }
        // The FileDescriptor (owner of the fd) lives until the source is cancelled.
        source.setCancelHandler { withExtendedLifetime(fd) {} }
    }

    /// Starts delivering (call once, after recording the socket).
    func start() { source.resume() }

    /// Closes the socket from our side (ends the notification session). Idempotent.
    func close() {
        guard !closed.trySet() else { return }
        source.cancel()
    }

    deinit { close() }
}

/// A flag that is set once; `trySet()` returns true for the first caller only.
final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Sets the flag; true when this call set it.
    func trySet() -> Bool { !value.exchange(true, ordering: .sequentiallyConsistent) }
    /// Whether the flag is set.
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
