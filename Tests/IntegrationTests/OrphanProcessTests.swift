// OrphanProcessTests: a daemon started through CleanSpawn dies with the process that started it,
// even when that process is SIGKILLed, and not before.

import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Orphan-proof child processes")
struct OrphanProcessTests {
    @Test("a SIGKILLed bluez-sim takes its private dbus-daemon with it")
    func sigkilledParentLeavesNoDaemon() throws {
        let path = ExampleProcess.binDirectory + "/bluez-sim"
        guard access(path, X_OK) == 0 else { throw ProcessTestError("\(path) is not built (swift build --build-tests builds it)") }
        var out: [Int32] = [-1, -1]
        // A close-on-exec pair made atomically: a daemon another test spawns meanwhile must not
        // inherit the write end (pipe + fcntl leaves a window).
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &out) == 0 else {
            throw ProcessTestError("socketpair: errno \(errno)")
        }
        defer { close(out[0]) }
        let sim: pid_t
        do {
            sim = try CleanSpawn.spawn(path, arguments: ["--print-address"],
                                       redirections: [0: .null(write: false), 1: .descriptor(out[1]), 2: .null(write: true)])
        } catch {
            close(out[1])
            throw ProcessTestError("\(error)")
        }
        close(out[1])
        var simReaped = false
        defer {
            if !simReaped { kill(sim, SIGKILL); var s: Int32 = 0; waitpid(sim, &s, 0) }
        }

        // bluez-sim prints the bus address once its dbus-daemon runs and org.bluez is served.
        let line = try Self.readLine(out[0], timeoutMs: 30_000)
        #expect(line.hasPrefix("unix:"))
        let daemons = Self.children(of: sim)
        try #require(daemons.count == 1, "bluez-sim should have exactly one child, its dbus-daemon: \(daemons)")
        let daemon = daemons[0]
        #expect(Self.command(daemon).hasSuffix("dbus-daemon"))
        let watch = try #require(ProcessExitWatch(pid: daemon), "dbus-daemon \(daemon) is already gone")

        // SIGKILL: no handler of bluez-sim runs, only the kernel's parent-death signal remains.
        kill(sim, SIGKILL)
        var status: Int32 = 0
        while waitpid(sim, &status, 0) < 0 && errno == EINTR {}
        simReaped = true
        #expect(status & 0x7f == SIGKILL)

        // The watch (a pidfd) wakes when the daemon exits; a survivor is killed here so the
        // failing run leaves nothing behind.
        let exited = watch.wait(timeout: .seconds(10))
        if !exited { kill(daemon, SIGKILL) }
        #expect(exited, "dbus-daemon \(daemon) outlived its SIGKILLed parent")
    }

    @Test("a child spawned from a thread that then exits keeps running")
    func childOutlivesItsSpawningThread() throws {
        // PR_SET_PDEATHSIG fires when the forking *thread* exits: CleanSpawn forks on a thread
        // that lives as long as the process, so a test thread's exit must not kill the child.
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &toChild) == 0, socketpair(AF_UNIX, type, 0, &fromChild) == 0 else {
            throw ProcessTestError("socketpair: errno \(errno)")
        }
        defer { close(toChild[1]); close(fromChild[0]) }
        let (input, output) = (toChild[0], fromChild[1])
        let spawned = try Self.onJoinedThread { () throws(CleanSpawn.Failure) -> pid_t in
            try CleanSpawn.spawn("/bin/cat", arguments: [], redirections: [0: .descriptor(input), 1: .descriptor(output)])
        }
        let child = try spawned.get()
        close(toChild[0])
        close(fromChild[1])
        defer { kill(child, SIGKILL); var s: Int32 = 0; waitpid(child, &s, 0) }

        // A round trip through cat after its spawning thread has gone.
        let written = write(toChild[1], "ping\n", 5)
        #expect(written == 5)
        let echoed = try Self.readLine(fromChild[0], timeoutMs: 10_000)
        #expect(echoed == "ping")
        #expect(kill(child, 0) == 0)
    }

    // MARK: - Helpers

    /// Runs `body` on a new POSIX thread and returns after that thread has been joined.
    static func onJoinedThread(_ body: @escaping @Sendable () throws(CleanSpawn.Failure) -> pid_t) throws -> Result<pid_t, CleanSpawn.Failure> {
        let box = JoinedThreadBox(body)
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<JoinedThreadBox>.fromOpaque(raw!).takeUnretainedValue()
            box.result = Result { () throws(CleanSpawn.Failure) -> pid_t in try box.body() }
            return nil
        }, Unmanaged.passUnretained(box).toOpaque())
        guard rc == 0 else { throw ProcessTestError("pthread_create: \(rc)") }
        pthread_join(thread, nil)
        return withExtendedLifetime(box) { box.result! }
    }

    /// Reads up to the first newline (without it) within `timeoutMs`.
    static func readLine(_ fd: Int32, timeoutMs: Int32) throws -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, timeoutMs)
            if r < 0 && errno == EINTR { continue }
            guard r == 1 else { throw ProcessTestError("no line within \(timeoutMs) ms (read so far: \(String(decoding: bytes, as: UTF8.self)))") }
            guard read(fd, &byte, 1) == 1 else { throw ProcessTestError("end of output before a line: \(String(decoding: bytes, as: UTF8.self))") }
            if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    /// The children of `pid`, from every thread's `/proc/<pid>/task/<tid>/children`.
    static func children(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { tid -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// The executable of `pid` (`/proc/<pid>/exe`), or "" when it is gone.
    static func command(_ pid: pid_t) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
    }
}

/// What a joined thread ran and returned.
private final class JoinedThreadBox: @unchecked Sendable {
    // @unchecked Sendable: `result` is written by the thread before it exits and read after
    // pthread_join, which orders the two.
    let body: @Sendable () throws(CleanSpawn.Failure) -> pid_t
    var result: Result<pid_t, CleanSpawn.Failure>?
    init(_ body: @escaping @Sendable () throws(CleanSpawn.Failure) -> pid_t) { self.body = body }
}
