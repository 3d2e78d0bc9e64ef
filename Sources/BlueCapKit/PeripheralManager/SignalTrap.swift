// SignalTrap: clean shutdown on SIGINT/SIGTERM: registered cleanups run, bounded by a deadline,
// then the process exits.

import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import Locking
#endif

/// Catches SIGINT and SIGTERM with `DispatchSource` signal sources, runs every registered
/// cleanup (concurrently, e.g. ``PeripheralManager/shutdown()`` to unregister advertisements
/// and applications from bluetoothd), then exits: status 0 when all finished within the
/// deadline, 1 otherwise. A second signal during cleanup exits at once.
///
/// ```swift
/// SignalTrap.shared.onShutdown { _ = try? await manager.shutdown().value }
/// SignalTrap.shared.install()
/// ```
public final class SignalTrap: Sendable {
    /// The process-wide trap.
    public static let shared = SignalTrap()

    private struct State {
        var cleanups: [Int: @Sendable () async -> Void] = [:]
        var nextID = 0
        var sources: [SignalSourceBox] = []
        var shuttingDown = false
        var onExit: (@Sendable (Int32) -> Void)?
    }
    // Sendable through this lock; cleanups are copied out and run after unlocking.
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "bluecap.signal-trap")
    /// What times the shutdown deadline.
    private let clock: any TimerClock

    /// A trap; use ``shared`` in programs (one per process). Tests may make their own and pass
    /// `exit` to observe the exit status instead of exiting, and a `ManualClock` to time the deadline.
    public init(exit: (@Sendable (Int32) -> Void)? = nil, clock: any TimerClock = SystemClock.shared) {
        self.clock = clock
        state.withLock { $0.onExit = exit }
    }

    /// Adds a cleanup; returns an id for ``removeCleanup(_:)``.
    @discardableResult
    public func onShutdown(_ cleanup: @escaping @Sendable () async -> Void) -> Int {
        state.withLock { s in
            s.nextID += 1
            s.cleanups[s.nextID] = cleanup
            return s.nextID
        }
    }

    /// Removes a cleanup.
    public func removeCleanup(_ id: Int) { state.withLock { _ = $0.cleanups.removeValue(forKey: id) } }

    /// Starts catching `signals` (default SIGINT and SIGTERM): their default action is disabled
    /// and a signal runs ``shutdown(deadline:)``. Idempotent per signal.
    public func install(signals: [Int32] = [SIGINT, SIGTERM], deadline: Duration = .seconds(3)) {
        for signo in signals {
            let already = state.withLock { s in s.sources.contains { $0.signal == signo } }
            if already { continue }
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: queue)
            source.setEventHandler { [weak self] in self?.shutdown(deadline: deadline) }
            source.resume()
            let box = SignalSourceBox(signal: signo, source: source)
            state.withLock { $0.sources.append(box) }
        }
    }

    /// Runs every cleanup concurrently and waits for them at most `deadline`, then exits
    /// (0: all done in time; 1: the deadline passed). A second call while running exits with 1.
    public func shutdown(deadline: Duration = .seconds(3)) {
        let (cleanups, second, onExit) = state.withLock { s -> ([@Sendable () async -> Void], Bool, (@Sendable (Int32) -> Void)?) in
            defer { s.shuttingDown = true }
            return (Array(s.cleanups.values), s.shuttingDown, s.onExit)
        }
        let finish: @Sendable (Int32) -> Void = onExit ?? { code in Glibc.exit(code) }
        if second { return finish(1) }
        let done = Atomic<Bool>(false)
        Task.detached {
            await withTaskGroup(of: Void.self) { group in
                for cleanup in cleanups { group.addTask { await cleanup() } }
            }
            if !done.exchange(true, ordering: .sequentiallyConsistent) { finish(0) }
        }
        clock.schedule(after: deadline) {
            if !done.exchange(true, ordering: .sequentiallyConsistent) { finish(1) }
        }
    }
}

/// Keeps a signal source alive.
/// `@unchecked Sendable`: dispatch sources are thread-safe objects; the box is never mutated.
private struct SignalSourceBox: @unchecked Sendable {
    let signal: Int32
    let source: any DispatchSourceSignal
}
