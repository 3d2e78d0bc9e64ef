// ExamplesProcess: runs the example executables as child processes (posix_spawn with a clean
// signal mask), collects their stdout lines, and always reaps them.

import DBus
import Foundation
import Glibc
import Synchronization
import TestSupport
import Locking

/// A running example executable. Its stdout is read line by line on a dedicated thread
/// (blocking `read`, no polling); stderr is kept for failure messages. `deinit` kills and reaps.
final class ExampleProcess: Sendable {
    let pid: pid_t
    let name: String
    /// Stdout, one item per line.
    let lines = Collector<String>()
    private let exitStatus = Collector<Int32>()
    private let stdoutClosed = Collector<Bool>()
    private let stderrClosed = Collector<Bool>()
    private let shared = Shared()

    /// Stderr text and whether the child was reaped, shared with the reader threads.
    private final class Shared: Sendable {
        let stderrText = Locked("")
        let reaped = Atomic<Bool>(false)
    }

    /// The directory holding the built executables: next to the test bundle (`swift build`
    /// puts products and the test bundle in the same directory), else `.build/debug`.
    static let binDirectory: String = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug").path,
        ]
        return candidates.first { access($0 + "/central-scanner", X_OK) == 0 } ?? candidates[1]
    }()

    /// Starts `name` (an executable in ``binDirectory``) with `arguments`; `bus` becomes
    /// `DBUS_SYSTEM_BUS_ADDRESS`.
    init(_ name: String, _ arguments: [String], bus: String) throws {
        self.name = name
        let path = Self.binDirectory + "/" + name
        guard access(path, X_OK) == 0 else { throw ProcessTestError("\(path) is not built (swift build --build-tests builds it)") }
        var out: [Int32] = [-1, -1]
        var err: [Int32] = [-1, -1]
        guard pipe(&out) == 0, pipe(&err) == 0 else { throw ProcessTestError("pipe: errno \(errno)") }
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = bus
        let child: pid_t
        do {
            child = try CleanSpawn.spawn(path, arguments: arguments, environment: env,
                                         redirections: [0: .null(write: false), 1: .descriptor(out[1]), 2: .descriptor(err[1])])
        } catch {
            for fd in out + err { close(fd) }
            throw ProcessTestError("\(error)")
        }
        close(out[1])
        close(err[1])
        pid = child

        let lines = self.lines
        let exitStatus = self.exitStatus
        let stdoutClosed = self.stdoutClosed
        let stderrClosed = self.stderrClosed
        let shared = self.shared
        let (outFD, errFD, spawned) = (out[0], err[0], child)
        Thread.detachNewThread {
            var pending = Data()
            Self.readAll(outFD) { chunk in
                pending.append(chunk)
                while let nl = pending.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: pending[pending.startIndex..<nl], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...nl)
                }
            }
            if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
            stdoutClosed.append(true)
        }
        Thread.detachNewThread {
            Self.readAll(errFD) { chunk in shared.stderrText.withLock { $0 += String(decoding: chunk, as: UTF8.self) } }
            stderrClosed.append(true)
        }
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0 && errno == EINTR {}
            shared.reaped.store(true, ordering: .sequentiallyConsistent)
            // WIFEXITED / WEXITSTATUS; a signal death is reported as 128 + signal.
            let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            exitStatus.append(code)
        }
    }

    deinit {
        if !shared.reaped.load(ordering: .sequentiallyConsistent) { kill(pid, SIGKILL) }
    }

    private static func readAll(_ fd: Int32, _ body: (Data) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            body(Data(buffer[0..<n]))
        }
        close(fd)
    }

    /// What the process wrote on stderr so far.
    var stderr: String { shared.stderrText.withLock { $0 } }

    /// Sends `signal`.
    func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the exit status and the end of stdout and stderr (every line is then in
    /// ``lines``, all of stderr in ``stderr``); after `timeout` the process is killed and the
    /// wait fails.
    func exitCode(within timeout: Duration) async throws -> Int32 {
        do {
            let code = try await exitStatus.wait(for: 1, timeout: timeout)[0]
            try await stdoutClosed.wait(for: 1, timeout: .seconds(5))
            try await stderrClosed.wait(for: 1, timeout: .seconds(5))
            return code
        } catch {
            kill(pid, SIGKILL)
            _ = try? await exitStatus.wait(for: 1, timeout: .seconds(5))
            throw ProcessTestError("\(name) did not exit within \(timeout); stderr:\n\(stderr)")
        }
    }

    /// Waits for a stdout line matching `match`; returns it.
    @discardableResult
    func waitLine(_ what: String, timeout: Duration = .seconds(15), _ match: (String) -> Bool) async throws -> String {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let items = lines.items
            if let line = items.first(where: match) { return line }
            guard clock.now < deadline else {
                throw ProcessTestError("\(name): no line \(what) within \(timeout); stdout:\n\(items.joined(separator: "\n"))\nstderr:\n\(stderr)")
            }
            _ = try? await lines.wait(for: items.count + 1, timeout: deadline - clock.now)
        }
    }

    /// Stdout's JSON objects.
    var events: [[String: Any]] { lines.items.compactMap(Self.parse) }

    static func parse(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }
}

/// A process test step failed.
struct ProcessTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
