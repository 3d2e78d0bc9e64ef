// MonitorSession: one startMonitoring call: its stream, its registration, its fallback scan.
import BlueZ
import DBus
import Futures
import Locking

/// One passive monitoring session of a ``CentralManager``.
final class MonitorSession: Sendable {
    let id: Int
    let adapter: ObjectPath
    let patterns: [MonitorPattern]
    let promise: StreamPromise<MonitorEvent>
    private struct State {
        var handle: AdvertisementMonitorHandle?
        var ended = false
        var activated = false
        var fallback = false
        /// Fallback (active scan) only: the devices reported found.
        var reported: Set<ObjectPath> = []
    }
    // Sendable through this lock; no call is made while holding it.
    private let state = Locked(State())

    init(id: Int, adapter: ObjectPath, patterns: [MonitorPattern], promise: StreamPromise<MonitorEvent>) {
        self.id = id
        self.adapter = adapter
        self.patterns = patterns
        self.promise = promise
    }

    /// Keeps the registration; returns false (and the caller unregisters it) when the session already ended.
    func attach(_ handle: AdvertisementMonitorHandle) -> Bool {
        state.withLock { s in
            guard !s.ended else { return false }
            s.handle = handle
            return true
        }
    }

    /// Marks the session ended; returns the registration to remove, and whether it was running.
    func end() -> (AdvertisementMonitorHandle?, Bool) {
        state.withLock { s in
            defer { s.ended = true; s.handle = nil }
            return (s.handle, !s.ended)
        }
    }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// `Activate()` was called.
    func activated() { state.withLock { $0.activated = true } }

    /// Whether bluetoothd activated the monitor.
    var isActive: Bool { state.withLock { $0.activated && !$0.ended } }

    /// Marks the session as the active-scanning fallback.
    func setFallback() { state.withLock { $0.fallback = true } }

    /// Whether the session is the active-scanning fallback.
    var isFallback: Bool { state.withLock { $0.fallback } }

    /// Fallback: whether `path` is reported for the first time.
    func firstReport(_ path: ObjectPath) -> Bool { state.withLock { $0.reported.insert(path).inserted } }
}
