// AcquiredServerSocket: our end of the socket an AcquireNotify or AcquireWrite call handed to bluetoothd.
import DBus
import Dispatch
import Foundation
import Locking
import Synchronization

/// Our end of the `SOCK_SEQPACKET` pair a local characteristic gives bluetoothd in reply to
/// `org.bluez.GattCharacteristic1.AcquireNotify` or `AcquireWrite`. For notifications each
/// datagram written is one value bluetoothd notifies (or indicates) to every subscribed central,
/// without a D-Bus message; for writes each datagram read is one value a central wrote. bluetoothd
/// closes its end when it is done with it; that is seen as end of file.
///
/// `@unchecked Sendable`: `fd` and `source` are set once in `init`; the dispatch source's
/// `cancel()` is thread-safe and `closed` (behind its lock) makes the teardown run once; sends
/// hold that lock, so the descriptor is closed only after the last send on it returned.
final class AcquiredServerSocket: @unchecked Sendable {
    /// Where the sockets' end-of-file handlers run (never user code: they hand over to the
    /// characteristic, which calls the application after its own lock).
    static let queue = DispatchQueue(label: "bluecap.gatt-server-sockets")

    private let fd: Int32
    private let source: any DispatchSourceRead
    private let closed = Locked(false)
    /// The ATT MTU bluetoothd passed in the call's options.
    let mtu: UInt16
    /// Values not sent because bluetoothd's socket buffer was full.
    let dropped = Atomic<Int>(0)

    /// Creates the pair: returns our socket and bluetoothd's end (for the reply). `onDatagram`
    /// gets each datagram bluetoothd writes (at most `mtu` bytes are read of one), on ``queue``;
    /// `onClose` runs once, on ``queue``, when bluetoothd closes its end (not after our own ``close()``).
    static func make(mtu: UInt16, onDatagram: (@Sendable ([UInt8]) -> Void)? = nil,
                     onClose: @escaping @Sendable () -> Void) throws(BlueZError) -> (AcquiredServerSocket, FileDescriptor) {
        let (ours, theirs) = try SocketCalls.seqpacketPair()
        return (AcquiredServerSocket(fd: ours, mtu: mtu, onDatagram: onDatagram, onClose: onClose), FileDescriptor(taking: theirs))
    }

    private init(fd: Int32, mtu: UInt16, onDatagram: (@Sendable ([UInt8]) -> Void)?, onClose: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.mtu = mtu
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: Self.queue)
        let source = self.source
        let closed = self.closed
        // A notification socket is never written by bluetoothd: readable means end of file
        // (stray bytes are read and ignored). A write socket's datagrams are the writes.
        let capacity = max(Int(mtu), 23)
        source.setEventHandler {
            while true {
                switch SocketCalls.receive(fd, capacity: capacity) {
                case .datagram(let bytes):
                    onDatagram?(bytes)
                    continue
                case .empty: return
                case .closed:
                    guard closed.withLock({ c in defer { c = true }; return !c }) else { return }
                    source.cancel()
                    onClose()
                    return
                }
            }
        }
        source.setCancelHandler { SocketCalls.close(fd) }
        source.resume()
    }

    deinit { close() }

    /// Whether the socket is still open on both sides as far as we know.
    var isOpen: Bool { !closed.withLock { $0 } }

    /// Whether bluetoothd's end is closed, asked of the socket now: true before the end-of-file
    /// handler has run on ``queue`` (it may run late on a busy host), or after ``close()``.
    var peerHasClosed: Bool {
        let fd = self.fd
        return closed.withLock { c in c || SocketCalls.peerClosed(fd) }
    }

    /// Sends `value` as one datagram. `.full` counts a drop; `.closed` closes our end.
    ///
    /// The send is made under `closed`'s lock, which ``close()`` takes before it cancels the
    /// source (whose cancel handler closes the descriptor): a send from any thread never reaches
    /// a closed descriptor, nor another file that reused its number. The send does not block.
    func send(_ value: Data) -> SocketCalls.SendResult {
        let fd = self.fd
        let result = closed.withLock { c -> SocketCalls.SendResult in
            guard !c else { return .closed(0) }
            return value.withUnsafeBytes { SocketCalls.send(fd, $0) }
        }
        switch result {
        case .sent: break
        case .full: dropped.add(1, ordering: .relaxed)
        case .closed: close()
        }
        return result
    }

    /// Closes our end (bluetoothd sees end of file and stops using it). Idempotent.
    func close() {
        guard closed.withLock({ c in defer { c = true }; return !c }) else { return }
        source.cancel()
    }
}
