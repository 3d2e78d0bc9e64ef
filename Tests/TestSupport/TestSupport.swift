// TestSupport: a private dbus-daemon and helpers shared by the bus-tier tests.
@_exported import BlueCapTesting
@_spi(Testing) import BlueCapKit
import DBus
import Foundation
import Locking

/// A private bus for one test: owns a `BusDaemon` and the connections opened on it.
public final class TestBus: Sendable {
    /// The daemon.
    public let daemon: BusDaemon
    private let connections = Locked<[Connection]>([])

    public init() throws {
        daemon = try BusDaemon()
    }

    /// The bus address.
    public var address: String { daemon.address }

    /// Opens a connection that is closed with the bus.
    public func connect() throws -> Connection {
        let c = try Connection(address: daemon.address)
        connections.withLock { $0.append(c) }
        return c
    }

    /// A session on this bus (its connection closed with the bus), as a program would make
    /// one: `clock` times the managers' deadlines, `context` runs their callbacks.
    public func session(context: any ExecutionContext = .futuresDefault,
                        clock: any TimerClock = SystemClock.shared) -> BluetoothSession {
        let session = BluetoothSession(bus: .address(daemon.address), context: context, clock: clock)
        if let c = session.busConnection { connections.withLock { $0.append(c) } }
        return session
    }

    /// Closes every connection, then stops the daemon.
    public func stop() {
        for c in connections.withLock({ $0 }) { c.close() }
        daemon.stop()
    }

    deinit { stop() }
}

/// Runs `body` with a fresh private bus, stopped afterwards.
public func withTestBus<T>(_ body: (TestBus) async throws -> T) async throws -> T {
    let bus = try TestBus()
    defer { bus.stop() }
    return try await body(bus)
}

/// Thrown when `withDeadline` runs out of time.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let what: String
    public let after: Duration
    /// What the caller's `diagnostics` said when the time ran out ("" without).
    public var diagnostics = ""
    public var description: String { "\(what): no result within \(after)\(diagnostics.isEmpty ? "" : "; \(diagnostics)")" }
}

/// Runs `body`, failing with `DeadlineExceeded` after `timeout` (`body` must honour cancellation).
/// `diagnostics` is asked, when the time runs out, for what the failure should report besides.
public func withDeadline<T: Sendable>(
    _ timeout: Duration = .seconds(10), _ what: String = "operation",
    diagnostics: @escaping @Sendable () -> String = { "" },
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await cancellableSleep(for: timeout)
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw DeadlineExceeded(what: what, after: timeout, diagnostics: diagnostics())
        }
        group.cancelAll()
        return value
    }
}

/// A thread-safe collector that tests await with a deadline.
public final class Collector<T: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
        /// Fires at the deadline; cancelled when the count is reached, so a satisfied wait
        /// leaves nothing behind (long runs wait thousands of times).
        let deadline: DeadlineTimer
    }
    private struct State {
        var items: [T] = []
        var waiters: [Waiter] = []
        var nextID = 0
    }
    private let state = Locked(State())

    public init() {}

    /// Appends a value and wakes waiters whose count is reached.
    public func append(_ value: T) {
        let ready = state.withLock { s -> [Waiter] in
            s.items.append(value)
            let n = s.items.count
            let r = s.waiters.filter { $0.count <= n }
            s.waiters.removeAll { $0.count <= n }
            return r
        }
        for w in ready {
            w.deadline.cancel()
            w.continuation.resume(returning: true)
        }
    }

    private func expire(_ id: Int) {
        let expired = state.withLock { s -> Waiter? in
            guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: i)
        }
        expired?.continuation.resume(returning: false)
    }

    /// The values so far.
    public var items: [T] { state.withLock { $0.items } }

    /// Waits until at least `count` values arrived; throws `DeadlineExceeded` after `timeout`.
    @discardableResult
    public func wait(for count: Int, timeout: Duration = .seconds(10)) async throws -> [T] {
        let reached = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let waiting = state.withLock { s -> Bool in
                if s.items.count >= count { return false }
                s.nextID += 1
                let id = s.nextID
                let deadline = DeadlineTimer(after: timeout) { [self] in expire(id) }
                s.waiters.append(Waiter(id: id, count: count, continuation: c, deadline: deadline))
                return true
            }
            if !waiting { c.resume(returning: true) }
        }
        guard reached else { throw DeadlineExceeded(what: "waiting for \(count) value(s), have \(items.count)", after: timeout) }
        return items
    }

    /// Waits until the values so far satisfy `isDone` (checked on each arrival, and first on
    /// what is there already); throws `DeadlineExceeded` after `timeout` in all.
    ///
    /// The check and the count waited past come from one snapshot, so a value that lands
    /// between them is never skipped.
    @discardableResult
    public func wait(until isDone: ([T]) -> Bool, timeout: Duration = .seconds(10)) async throws -> [T] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = items
            if isDone(seen) { return seen }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw DeadlineExceeded(what: "waiting for a condition, unmet by the \(seen.count) value(s) that came", after: timeout) }
            _ = try? await wait(for: seen.count + 1, timeout: left)
        }
    }
}

/// What a finished child process printed and how it ended.
public struct ProcessOutput: Sendable {
    /// Standard output, trimmed of surrounding white space.
    public let stdout: String
    /// The exit status.
    public let status: Int32
}

/// Runs `/usr/bin/python3` (Debian's, with python3-dbus) with `arguments` and returns its output.
///
/// The blocking read of the child's output happens on a thread of its own, never on the
/// concurrency pool: on a 2-core machine the pool has two threads, and a test holding one for
/// seconds delays every other test's continuations (and their deadlines) by as much.
/// The child is terminated when `timeout` passes first.
public func runPython(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> ProcessOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.standardError
    try process.run()
    let result = Collector<ProcessOutput>()
    Thread.detachNewThread {
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        result.append(ProcessOutput(
            stdout: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
            status: process.terminationStatus))
    }
    do {
        return try await result.wait(for: 1, timeout: timeout)[0]
    } catch {
        process.terminate()
        throw error
    }
}

/// A weak reference that any thread may test (for instance inside `waitUntil`): proves that an
/// object is released when it should be.
public final class WeakReference<T: AnyObject & Sendable>: Sendable {
    private struct Box { weak var object: T? }
    private let box: Locked<Box>

    /// Refers to `object` without retaining it.
    public init(_ object: T) { box = Locked(Box(object: object)) }

    /// Whether the object has been deallocated.
    public var isReleased: Bool { box.withLock { $0.object == nil } }
}

extension BluetoothSession {
    /// The session's bus connection, for raw D-Bus calls beside the managers; throws naming why
    /// there is none (the bus could not be reached).
    public func testConnection() throws -> Connection {
        try need(busConnection, "a connection to the \(bus): \(unavailableReason ?? "none")")
    }
}
