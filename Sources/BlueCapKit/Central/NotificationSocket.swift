// NotificationSocket: the AcquireNotify socket, read in the session's owner-thread poll set.
import DBus
import Foundation
import Glibc
import Synchronization
import Locking

/// Reads the SOCK_SEQPACKET socket `AcquireNotify` returns: each datagram is one notification.
/// The socket is watched by the session connection's owner thread, in the same `poll` as the
/// bus (``DBus/DescriptorWatch``): a notification costs one thread wake-up, and a consumer on
/// the `immediate` context or the session's task executor gets it on that thread. End of file,
/// an error or the connection closing ends it; ``close()`` ends it from our side (which is how
/// a client stops an acquired notification).
///
/// `@unchecked Sendable`: `phase` is a `Locked`; `closed` (an atomic) makes sure the end runs
/// once; the read buffer is used only by the handler, which runs on the owner thread.
///
/// Equal only to itself (the notification state machine tells one socket from another).
final class NotificationSocket: Equatable, @unchecked Sendable {
    private enum Phase {
        case prepared(fd: FileDescriptor, connection: Connection, onReadable: @Sendable () -> Bool, onConnectionClosed: @Sendable () -> Void)
        case watching(DescriptorWatch)
        case ended
    }
    private let phase: Locked<Phase>
    private let closed: OnceFlag
    /// The MTU BlueZ reported.
    let mtu: UInt16

    /// Datagrams read per handler call: the poll comes back at once for the rest. The bus's own
    /// messages wait while it runs (256 datagrams take about 0.4 ms), and an async consumer is
    /// woken once per call: 256 rather than 64 took the default executor's async consumer of a
    /// burst from 1.23-1.34x the CPU of a FutureStream callback to 1.08-1.12x (BENCHMARKS.md).
    static let datagramsPerWake = 256

    /// Prepares reading `fd` on `connection`'s owner thread (``start()`` begins): `onData` gets
    /// each datagram, `onClose` runs once at the end (not when ``close()`` is called by us).
    init(fd: FileDescriptor, mtu: UInt16, connection: Connection,
         onData: @escaping @Sendable (Data) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.mtu = mtu
        let raw = fd.rawValue
        let flags = fcntl(raw, F_GETFL)
        _ = fcntl(raw, F_SETFL, flags | O_NONBLOCK)
        let closed = OnceFlag()
        self.closed = closed
        let capacity = max(Int(mtu), 517) + 8
        let buffer = ReadBuffer(capacity: capacity)
        let onReadable: @Sendable () -> Bool = {
            // Inside the owner loop's wake batch: an async consumer wakes once per poll round.
            for _ in 0..<Self.datagramsPerWake {
                // A close from a consumer that this handler just served: stop reading at once.
                if closed.isSet { return false }
                let n = recv(raw, buffer.bytes, capacity, Int32(MSG_DONTWAIT))
                if n > 0 {
                    onData(Data(bytes: buffer.bytes, count: n))
                    continue
                }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return true }
                // 0: the peer closed (link lost, StopNotify); < 0: a socket error.
                if closed.trySet() { onClose() }
                return false
            }
            return true
        }
        phase = Locked(.prepared(fd: fd, connection: connection, onReadable: onReadable, onConnectionClosed: {
            if closed.trySet() { onClose() }
        }))
    }

    /// Starts delivering (call once, after recording the socket).
    func start() {
        let prepared = phase.withLock { p -> (FileDescriptor, Connection, @Sendable () -> Bool, @Sendable () -> Void)? in
            guard case .prepared(let fd, let connection, let onReadable, let onConnectionClosed) = p else { return nil }
            p = .ended
            return (fd, connection, onReadable, onConnectionClosed)
        }
        guard let (fd, connection, onReadable, onConnectionClosed) = prepared else { return }
        // Outside the lock: `onConnectionClosed` runs here when the connection is closed already.
        let watch = connection.watchInput(of: fd, onReadable: onReadable, onConnectionClosed: onConnectionClosed)
        let cancelNow = phase.withLock { p -> Bool in
            guard !closed.isSet else { return true }
            p = .watching(watch)
            return false
        }
        if cancelNow { watch.cancel() }
    }

    /// Closes the socket from our side (ends the notification session). Idempotent.
    func close() {
        guard closed.trySet() else { return }
        let watch = phase.withLock { p -> DescriptorWatch? in
            defer { p = .ended }
            if case .watching(let watch) = p { return watch }
            return nil
        }
        watch?.cancel()
    }

    deinit { close() }

    /// Identity: the same socket.
    static func == (a: NotificationSocket, b: NotificationSocket) -> Bool { a === b }
}

/// The datagram buffer of one socket's reader.
///
/// `@unchecked Sendable`: used only by the socket's handler, which runs on the connection's
/// owner thread (one thread, one call at a time).
private final class ReadBuffer: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    init(capacity: Int) { bytes = .allocate(byteCount: capacity, alignment: 16) }
    deinit { bytes.deallocate() }
}

/// A flag that is set once; `trySet()` returns true for the first caller only.
final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Sets the flag; true when this call set it.
    func trySet() -> Bool { !value.exchange(true, ordering: .sequentiallyConsistent) }
    /// Whether the flag is set.
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
