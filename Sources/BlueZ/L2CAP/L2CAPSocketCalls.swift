// L2CAPSocketCalls: every system call of the L2CAP connection-oriented channel sockets, in one thin gateway.
import Glibc

/// The socket calls behind LE credit-based L2CAP channels (`AF_BLUETOOTH`, `SOCK_SEQPACKET`,
/// `BTPROTO_L2CAP`): one place where the C calls are made and `errno` is read. The constants
/// are the kernel's (`include/net/bluetooth/{bluetooth,l2cap}.h`), defined here so that no
/// Bluetooth development headers are needed.
package enum L2CAPSocketCalls {
    // MARK: Constants

    static let afBluetooth: Int32 = 31
    static let btprotoL2CAP: Int32 = 0
    static let solBluetooth: Int32 = 274
    static let btSecurity: Int32 = 4
    static let btSendMTU: Int32 = 12
    static let btReceiveMTU: Int32 = 13
    /// `BDADDR_LE_PUBLIC`.
    package static let lePublic: UInt8 = 1
    /// `BDADDR_LE_RANDOM`.
    package static let leRandom: UInt8 = 2
    /// `sizeof(struct sockaddr_l2)`: family, PSM, bdaddr, CID, address type, padding.
    static let addressSize = 14

    /// An L2CAP socket address (`struct sockaddr_l2`).
    package struct Address: Equatable, Sendable {
        /// `"AA:BB:CC:DD:EE:FF"`.
        package var address: String
        /// ``L2CAPSocketCalls/lePublic`` or ``L2CAPSocketCalls/leRandom``.
        package var type: UInt8
        /// The PSM (0: any, on bind).
        package var psm: UInt16

        package init(address: String, type: UInt8, psm: UInt16) {
            self.address = address
            self.type = type
            self.psm = psm
        }

        /// The kernel's bytes: little-endian PSM, the address bytes in reverse order.
        func bytes() -> [UInt8]? {
            let parts = address.split(separator: ":").compactMap { UInt8($0, radix: 16) }
            guard parts.count == 6, address.count == 17 else { return nil }
            var b = [UInt8](repeating: 0, count: L2CAPSocketCalls.addressSize)
            b[0] = UInt8(L2CAPSocketCalls.afBluetooth & 0xFF); b[1] = 0
            b[2] = UInt8(psm & 0xFF); b[3] = UInt8(psm >> 8)
            for i in 0..<6 { b[4 + i] = parts[5 - i] }
            b[12] = type
            return b
        }

        /// Reads the kernel's bytes back.
        static func from(_ b: [UInt8]) -> Address {
            let address = (0..<6).map { i in
                let s = String(b[9 - i], radix: 16, uppercase: true)
                return s.count == 1 ? "0" + s : s
            }.joined(separator: ":")
            return Address(address: address, type: b[12], psm: UInt16(b[2]) | UInt16(b[3]) << 8)
        }
    }

    // MARK: Set-up

    /// A new non-blocking, close-on-exec L2CAP socket at `security` (1 low, 2 medium:
    /// encrypted, 3 high: encrypted and authenticated), bound to `local`.
    /// Throws the errno and the call that failed.
    package static func socket(security: UInt8, bind local: Address) throws(L2CAPSocketError) -> Int32 {
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = Glibc.socket(afBluetooth, type, btprotoL2CAP)
        guard fd >= 0 else { throw L2CAPSocketError(call: "socket", errno: errno) }
        var level: (UInt8, UInt8) = (security, 0)
        if security > 1, setsockopt(fd, solBluetooth, btSecurity, &level, 2) != 0 {
            let e = errno
            Glibc.close(fd)
            throw L2CAPSocketError(call: "setsockopt(BT_SECURITY)", errno: e)
        }
        guard let bytes = local.bytes() else {
            Glibc.close(fd)
            throw L2CAPSocketError(call: "bind", errno: EINVAL)
        }
        let rc = bytes.withUnsafeBytes { raw in
            Glibc.bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addressSize))
        }
        guard rc == 0 else {
            let e = errno
            Glibc.close(fd)
            throw L2CAPSocketError(call: "bind", errno: e)
        }
        return fd
    }

    /// Listens on a bound socket.
    package static func listen(_ fd: Int32, backlog: Int32) throws(L2CAPSocketError) {
        guard Glibc.listen(fd, backlog) == 0 else { throw L2CAPSocketError(call: "listen", errno: errno) }
    }

    /// Starts connecting to `remote` without blocking: `true` when connected at once, `false`
    /// when in progress (the socket becomes writable when done; read ``pendingError(_:)``).
    package static func connect(_ fd: Int32, to remote: Address) throws(L2CAPSocketError) -> Bool {
        guard let bytes = remote.bytes() else { throw L2CAPSocketError(call: "connect", errno: EINVAL) }
        let rc = bytes.withUnsafeBytes { raw in
            Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addressSize))
        }
        if rc == 0 { return true }
        if errno == EINPROGRESS || errno == EAGAIN { return false }
        throw L2CAPSocketError(call: "connect", errno: errno)
    }

    /// The result of a non-blocking connect (`SO_ERROR`): 0 when connected.
    package static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &size) == 0 else { return errno }
        return value
    }

    /// Accepts one waiting connection (non-blocking, close-on-exec): the socket and the peer,
    /// nil when none is waiting.
    package static func accept(_ fd: Int32) throws(L2CAPSocketError) -> (Int32, Address)? {
        var b = [UInt8](repeating: 0, count: addressSize)
        var size = socklen_t(addressSize)
        let client = b.withUnsafeMutableBytes { raw in
            Glibc.accept(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &size)
        }
        if client >= 0 {
            // accept4 is not visible to Swift (a _GNU_SOURCE call): the flags are set after.
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            return (client, Address.from(b))
        }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED { return nil }
        throw L2CAPSocketError(call: "accept", errno: errno)
    }

    /// The socket's own address (the PSM the kernel chose after `bind` with PSM 0).
    package static func localAddress(_ fd: Int32) -> Address? {
        var b = [UInt8](repeating: 0, count: addressSize)
        var size = socklen_t(addressSize)
        let rc = b.withUnsafeMutableBytes { raw in
            getsockname(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &size)
        }
        return rc == 0 ? Address.from(b) : nil
    }

    /// The send and receive MTUs (`BT_SNDMTU`, `BT_RCVMTU`) of a connected socket.
    package static func mtus(_ fd: Int32) -> (send: Int, receive: Int) {
        func read(_ option: Int32) -> Int {
            var value: UInt16 = 0
            var size = socklen_t(2)
            return getsockopt(fd, solBluetooth, option, &value, &size) == 0 ? Int(value) : 23
        }
        return (read(btSendMTU), read(btReceiveMTU))
    }

    // MARK: Data

    /// What a non-blocking send did.
    package enum SendResult: Equatable {
        /// The whole SDU was queued.
        case sent
        /// No room (`EAGAIN`: the peer gave no credits and the socket buffer is full).
        case full
        /// The channel is gone (errno given).
        case closed(Int32)
    }

    /// Sends one SDU without blocking and without SIGPIPE.
    package static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SendResult {
        let n = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        if n == bytes.count { return .sent }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .full }
        return .closed(n < 0 ? errno : 0)
    }

    /// What a non-blocking receive got.
    package enum ReceiveResult: Equatable {
        /// One SDU.
        case sdu([UInt8])
        /// Nothing to read now.
        case empty
        /// End of file (errno 0) or the error that ended the channel.
        case closed(Int32)
    }

    /// Receives one SDU of at most `capacity` bytes without blocking.
    package static func receive(_ fd: Int32, capacity: Int) -> ReceiveResult {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, capacity, Int32(MSG_DONTWAIT)) }
        if n > 0 { return .sdu(Array(buffer[..<n])) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .empty }
        return .closed(n < 0 ? errno : 0)
    }

    /// A connected pair of non-blocking, close-on-exec `SOCK_SEQPACKET` Unix sockets: the
    /// simulator's stand-in for an L2CAP channel (the same SDU semantics).
    package static func seqpacketPair() throws(L2CAPSocketError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw L2CAPSocketError(call: "socketpair", errno: errno) }
        return (fds[0], fds[1])
    }

    /// Closes `fd`.
    package static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// The text of `errno` `code`.
    package static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
