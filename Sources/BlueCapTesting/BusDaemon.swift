// A private dbus-daemon for tests, examples and the simulator.
internal import CSpawn
import Foundation
import Glibc
import Synchronization

/// Why a private bus could not be started.
public struct BusDaemonError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed and why, e.g. "dbus-daemon not found: install the dbus package".
    public var message: String
    public var description: String { message }
}

/// A private `dbus-daemon` listening on a Unix socket in a fresh temporary directory, with a
/// policy that allows everything. `stop()` (or releasing the object) terminates and reaps it;
/// it dies with this process even on `SIGKILL` (started through ``CleanSpawn``).
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
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="max_replies_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="reply_timeout">300000</limit>
        </busconfig>

        """
        // From here every throw removes the directory; once spawned, the daemon is stopped and
        // reaped first (CleanSpawn's parent-death signal covers a crash of this process).
        guard FileManager.default.createFile(atPath: dir + "/bus.conf", contents: Data(config.utf8)) else {
            BusDaemon.removeDirectory(dir)
            throw BusDaemonError(message: "cannot write \(dir)/bus.conf")
        }

        var fds: [Int32] = [-1, -1]
        guard cspawn_pipe_cloexec(&fds) == 0 else {
            let code = errno
            BusDaemon.removeDirectory(dir)
            throw BusDaemonError(message: "pipe failed: \(String(cString: strerror(code)))")
        }
        defer { Glibc.close(fds[0]) }

        let quiet: [Int32: CleanSpawn.Redirection] = Self.debugLogging ? [:] : [1: .null(write: true), 2: .null(write: true)]
        let spawned: pid_t
        do {
            spawned = try CleanSpawn.spawn(
                executable, arguments: ["--config-file=\(dir)/bus.conf", "--nofork", "--print-address=3"],
                redirections: quiet.merging([3: .descriptor(fds[1])]) { $1 })
        } catch {
            Glibc.close(fds[1])
            BusDaemon.removeDirectory(dir)
            throw BusDaemonError(message: error.description)
        }
        Glibc.close(fds[1])
        pid = spawned

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
            BusDaemon.terminate(spawned)
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

    /// `BLUECAP_LOG=debug`: the daemon's own output is kept.
    private static let debugLogging: Bool = {
        guard let p = getenv("BLUECAP_LOG") else { return false }
        return String(cString: p) == "debug"
    }()

    private static func terminate(_ pid: Int32, timeout: Duration = .seconds(3)) {
        let pidfd = cspawn_pidfd_open(pid, 0)
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
