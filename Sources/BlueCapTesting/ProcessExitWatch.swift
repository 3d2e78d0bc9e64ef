// ProcessExitWatch: wait for any process (not only a child) to exit, without polling.
internal import CSpawn
import Glibc

/// Watches one process through a pidfd (`pidfd_open`): ``wait(timeout:)`` returns as soon as
/// the process exits, whoever its parent is. Open the watch while the process runs: a pidfd
/// names that process even if its pid is later reused.
public final class ProcessExitWatch: Sendable {
    /// The process watched.
    public let pid: Int32
    private let pidfd: Int32

    /// Watches `pid`; nil when no such process exists (it has exited and been reaped).
    public init?(pid: Int32) {
        let fd = cspawn_pidfd_open(pid, 0)
        guard fd >= 0 else { return nil }
        self.pid = pid
        pidfd = fd
    }

    deinit { close(pidfd) }

    /// Waits at most `timeout` for the process to exit; true when it has.
    public func wait(timeout: Duration) -> Bool {
        var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        var r: Int32
        repeat { r = poll(&p, 1, ms) } while r < 0 && errno == EINTR
        return r == 1
    }
}
