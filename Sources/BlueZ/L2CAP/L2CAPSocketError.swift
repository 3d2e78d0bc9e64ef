// L2CAPSocketError: a failed L2CAP socket call and its errno.
import Glibc

/// A failed call of ``L2CAPSocketCalls``: the call and its `errno`.
package struct L2CAPSocketError: Error, Sendable, Equatable {
    /// The C call (`"bind"`, `"connect"`…).
    package var call: String
    /// Its `errno`.
    package var errno: Int32

    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// `ECONNREFUSED`: nothing listens on the PSM.
    package var isRefused: Bool { errno == ECONNREFUSED }
    /// `EACCES`/`EPERM`: a fixed PSM needs `CAP_NET_BIND_SERVICE`.
    package var isPermission: Bool { errno == EACCES || errno == EPERM }
    /// `EHOSTDOWN`/`ETIMEDOUT`/`EHOSTUNREACH`: the device did not answer.
    package var isUnreachable: Bool { errno == EHOSTDOWN || errno == ETIMEDOUT || errno == EHOSTUNREACH }
    /// `EADDRINUSE`: the PSM is taken.
    package var isInUse: Bool { errno == EADDRINUSE }
    /// `EAFNOSUPPORT`/`EPROTONOSUPPORT`: the kernel has no Bluetooth L2CAP sockets.
    package var isUnsupported: Bool { errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT }
}
