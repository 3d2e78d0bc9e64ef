// MosquittoBroker: a private mosquitto on a loopback port, for `--simulate` and the tests.

import BlueCapKit
import BlueZSimulator
import ExampleSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `mosquitto` (Debian's package) listening on 127.0.0.1 only, anonymous, without persistence,
/// started with ``CleanSpawn`` (it dies with this process). Ready once it logs that it is
/// running; its log is kept (the last 100 lines) for error messages. ``kill()`` and
/// ``restart()`` are the faults the tests inject.
package final class MosquittoBroker: Sendable {
    /// The TCP port on 127.0.0.1.
    package let port: Int
    private let directory: String
    private let executable: String
    private struct State { var pid: pid_t?; var log: [String] = [] }
    private let state = Guarded(State())

    package var address: BrokerAddress { BrokerAddress(host: "127.0.0.1", port: port) }

    private init(port: Int, directory: String, executable: String) {
        self.port = port
        self.directory = directory
        self.executable = executable
    }

    /// Starts a broker on a free loopback port (or `port`) and returns once it accepts connections.
    package static func start(port: Int? = nil, timeout: Duration = .seconds(10)) async throws -> MosquittoBroker {
        guard let executable = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw MQTTError(.library, "mosquitto is not installed (apt-get install mosquitto; `make deps` installs it), or give --broker HOST:PORT")
        }
        let directory = NSTemporaryDirectory() + "ble-gateway-broker-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let broker = MosquittoBroker(port: try port ?? freePort(), directory: directory, executable: executable)
            do {
                try await broker.launch(timeout: timeout)
                return broker
            } catch {
                lastError = error
                if port != nil { break }
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw lastError ?? MQTTError(.library, "mosquitto did not start")
    }

    /// Kills the broker at once (`SIGKILL`: no clean goodbye to its clients).
    package func kill() {
        guard let pid = state.withLock({ s in defer { s.pid = nil }; return s.pid }) else { return }
        _ = Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }

    /// Starts the broker again on the same port.
    package func restart(timeout: Duration = .seconds(10)) async throws {
        kill()
        try await launch(timeout: timeout)
    }

    /// Stops the broker and removes its directory.
    package func stop() {
        kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The broker's last log lines.
    package var log: [String] { state.withLock { $0.log } }

    // MARK: Starting

    private func launch(timeout: Duration) async throws {
        let conf = directory + "/mosquitto.conf"
        try """
        listener \(port) 127.0.0.1
        allow_anonymous true
        persistence false
        log_dest stderr
        log_type error
        log_type warning
        log_type notice
        log_type information
        log_timestamp false
        """.write(toFile: conf, atomically: true, encoding: .utf8)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0, fcntl(fds[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(fds[1], F_SETFD, FD_CLOEXEC) == 0 else { throw MQTTError(.library, "pipe: \(String(cString: strerror(errno)))") }
        let pid: pid_t
        do {
            pid = try CleanSpawn.spawn(executable, arguments: ["-c", conf],
                                       redirections: [0: .null(write: false), 1: .null(write: true), 2: .descriptor(fds[1])])
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[1])
        state.withLock { $0.pid = pid }
        let ready = Promise<Void>()
        let reader = fds[0]
        Thread.detachNewThread { [self] in readLog(reader, ready: ready) }
        do {
            try await ready.future.timeout(after: timeout).value
        } catch {
            kill()
            throw MQTTError(.library, "mosquitto did not start on 127.0.0.1:\(port): \(log.suffix(3).joined(separator: " / "))")
        }
    }

    /// Reads the broker's log until it ends: "running" means ready, the end before it a failure.
    private func readLog(_ fd: Int32, ready: Promise<Void>) {
        defer { close(fd) }
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            pending.append(contentsOf: buffer[0..<n])
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                state.withLock { s in
                    s.log.append(line)
                    if s.log.count > 100 { s.log.removeFirst(s.log.count - 100) }
                }
                if line.contains(" running") { _ = ready.success(()) }
            }
        }
        _ = ready.failure(MQTTError(.library, "mosquitto exited"))
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw MQTTError(.library, "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { throw MQTTError(.library, "cannot find a free loopback port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
