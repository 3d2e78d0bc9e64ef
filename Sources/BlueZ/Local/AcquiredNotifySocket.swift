// AcquiredNotifySocket: our end of the socket an AcquireNotify call handed to bluetoothd.
import DBus
import Dispatch
import Foundation
import Locking
import Synchronization

/// Our end of the `SOCK_SEQPACKET` pair a local characteristic gives bluetoothd in reply to
/// `org.bluez.GattCharacteristic1.AcquireNotify`: each datagram written is one value bluetoothd
/// notifies (or indicates) to every subscribed central, without a D-Bus message. bluetoothd
/// closes its end when the last central unsubscribes or goes; that is seen as end of file.
///
/// `@unchecked Sendable`: `fd` and `source` are set once in `init`; the dispatch source's
/// `cancel()` is thread-safe and `closed` (behind its lock) makes the teardown run once.
final class AcquiredNotifySocket: @unchecked Sendable {
    /// Where the sockets' end-of-file handlers run (never user code: they hand over to the
    /// characteristic, which calls the application after its own lock).
    static let queue = DispatchQueue(label: "bluecap.gatt-server-sockets")

    private let fd: Int32
    private let source: any DispatchSourceRead
    private let closed = Locked(false)
    /// The ATT MTU bluetoothd passed in `AcquireNotify`'s options.
    let mtu: UInt16
    /// Values not sent because bluetoothd's socket buffer was full.
    let dropped = Atomic<Int>(0)

    /// Creates the pair: returns our socket and bluetoothd's end (for the reply). `onClose` runs
    /// once, on ``queue``, when bluetoothd closes its end (not after our own ``close()``).
    static func make(mtu: UInt16, onClose: @escaping @Sendable () -> Void) throws(BlueZError) -> (AcquiredNotifySocket, FileDescriptor) {
        let (ours, theirs) = try SocketCalls.seqpacketPair()
        return (AcquiredNotifySocket(fd: ours, mtu: mtu, onClose: onClose), FileDescriptor(taking: theirs))
    }

    private init(fd: Int32, mtu: UInt16, onClose: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.mtu = mtu
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: Self.queue)
        let source = self.source
        let closed = self.closed
        // bluetoothd never writes to this socket: readable means end of file (or stray bytes, read and ignored).
        source.setEventHandler {
            while true {
                switch SocketCalls.receive(fd, capacity: 16) {
                case .datagram: continue
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

    /// Sends `value` as one datagram. `.full` counts a drop; `.closed` closes our end.
    func send(_ value: Data) -> SocketCalls.SendResult {
        guard isOpen else { return .closed(0) }
        let result = value.withUnsafeBytes { SocketCalls.send(fd, $0) }
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
