// A private dbus-daemon for tests, examples and the simulator.
import Foundation
import Glibc
import Synchronization

/// Why a private bus could not be started.
public struct BusDaemonError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// A private `dbus-daemon` listening on a Unix socket in a fresh temporary directory, with a
/// policy that allows everything. `stop()` (or releasing the object) terminates and reaps it.
public final class BusDaemon: Sendable {
    /// The address clients connect to (`unix:path=…,guid=…`).
    public let address: String
    /// The daemon's process id.
    public let pid: Int32
    private let directory: String
    private let stopped = Atomic<Bool>(false)

    /// Starts the daemon and waits (at most `startupTimeout`) for it to print its address.
    public init(startupTimeout: Duration = .seconds(10)) throws(BusDaemonError) {
        guard let executable = BusDaemon.findExecutable() else {
            throw BusDaemonError(message: "dbus-daemon not found — apt-get install dbus")
        }
        var template = Array("/tmp/bluecap-bus-XXXXXX".utf8CString)
        guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw BusDaemonError(message: "cannot create a temporary directory: errno \(errno)")
        }
        directory = dir
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(dir)/bus</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
          </policy>
        </busconfig>

        """
        guard FileManager.default.createFile(atPath: dir + "/bus.conf", contents: Data(config.utf8)) else {
            throw BusDaemonError(message: "cannot write \(dir)/bus.conf")
        }

        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw BusDaemonError(message: "pipe failed: errno \(errno)") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        defer { Glibc.close(fds[0]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 3)
        if !Log.enabled {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let args = [executable, "--config-file=\(dir)/bus.conf", "--nofork", "--print-address=3"]
        var cargs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attr, &cargs, environ)
        Glibc.close(fds[1])
        guard rc == 0 else {
            BusDaemon.removeDirectory(dir)
            throw BusDaemonError(message: "cannot start \(executable): error \(rc)")
        }
        pid = child

        // Read the address line, bounded by the startup timeout.
        var text = ""
        let deadline = ContinuousClock.now + startupTimeout
        var buffer = [UInt8](repeating: 0, count: 512)
        while !text.contains("\n") {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { break }
            var p = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            let ms = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard poll(&p, 1, ms) > 0 else { continue }
            let n = read(fds[0], &buffer, buffer.count)
            if n <= 0 { break }
            text += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        guard !line.isEmpty else {
            BusDaemon.terminate(child)
            BusDaemon.removeDirectory(dir)
            throw BusDaemonError(message: "dbus-daemon did not report an address within \(startupTimeout)")
        }
        address = line
    }

    deinit { stop() }

    /// Sends SIGTERM, waits up to `timeout` for exit (pidfd + poll), then SIGKILL; always reaps.
    /// Idempotent.
    public func stop(timeout: Duration = .seconds(3)) {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        BusDaemon.terminate(pid, timeout: timeout)
        BusDaemon.removeDirectory(directory)
    }

    private static func terminate(_ pid: Int32, timeout: Duration = .seconds(3)) {
        let pidfd = LibDBus.pidfdOpen(pid)
        kill(pid, SIGTERM)
        if pidfd >= 0 {
            var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            var r: Int32
            repeat { r = poll(&p, 1, ms) } while r < 0 && errno == EINTR
            if r == 0 { kill(pid, SIGKILL) }
            Glibc.close(pidfd)
        } else {
            kill(pid, SIGKILL)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    private static func removeDirectory(_ dir: String) {
        try? FileManager.default.removeItem(atPath: dir)
    }

    private static func findExecutable() -> String? {
        let path = (getenv("PATH").map { String(cString: $0) } ?? "") + ":/usr/bin:/bin:/usr/local/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/dbus-daemon"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
