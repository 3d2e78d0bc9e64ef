// GattOperationQueue: one GATT operation at a time per device.
import Synchronization

/// Runs a device's GATT operations one at a time, in order, so two never collide in BlueZ.
///
/// Each operation finishes when its D-Bus call answers (every call has a timeout, so a call that
/// is never answered still finishes) or when the queue is failed (link lost, terminate): then
/// the next one starts, and a late answer is ignored. The queue holds at most ``limit`` entries.
final class GattOperationQueue: Sendable {
    /// Starts the operation; it must call `finish` once done (extra calls are ignored).
    typealias Start = @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void
    /// Fails the operation's promise without running it (or while it runs).
    typealias Fail = @Sendable (PeripheralError) -> Void

    private struct Entry {
        let id: Int
        let operation: String
        let start: Start
        let fail: Fail
    }

    private struct State {
        var waiting: [Entry] = []
        var running: Entry?
        var nextID = 0
    }

    /// The most operations queued (running included) before new ones fail with `.busy`.
    let limit: Int
    private let state = Mutex(State())

    init(limit: Int = 256) { self.limit = limit }

    /// Queues an operation; it fails at once with `.busy` when the queue is full.
    func enqueue(_ operation: String, path: String, start: @escaping Start, fail: @escaping Fail) {
        let (accepted, runNow) = state.withLock { s -> (Bool, Entry?) in
            guard s.waiting.count + (s.running == nil ? 0 : 1) < limit else { return (false, nil) }
            s.nextID += 1
            let entry = Entry(id: s.nextID, operation: operation, start: start, fail: fail)
            if s.running == nil {
                s.running = entry
                return (true, entry)
            }
            s.waiting.append(entry)
            return (true, nil)
        }
        guard accepted else {
            fail(PeripheralError(kind: .busy, operation: operation, path: path,
                                 message: "\(limit) GATT operations already queued for the device"))
            return
        }
        if let runNow { run(runNow) }
    }

    private func run(_ entry: Entry) {
        entry.start { [weak self] in self?.finished(entry.id) }
    }

    private func finished(_ id: Int) {
        let next = state.withLock { s -> Entry? in
            guard s.running?.id == id else { return nil }
            s.running = nil
            guard !s.waiting.isEmpty else { return nil }
            s.running = s.waiting.removeFirst()
            return s.running
        }
        if let next { run(next) }
    }

    /// Fails the running and every waiting operation with `error(operation)`; the queue is empty after.
    func failAll(_ error: (String) -> PeripheralError) {
        let all = state.withLock { s -> [Entry] in
            var all = s.waiting
            if let r = s.running { all.insert(r, at: 0) }
            s.waiting = []
            s.running = nil
            return all
        }
        for e in all { e.fail(error(e.operation)) }
    }

    /// Operations queued or running.
    var count: Int { state.withLock { $0.waiting.count + ($0.running == nil ? 0 : 1) } }
}
