// ForeignConnectionWatch: a session's record of the links no manager of it made.
import BlueZ
import DBus
import Dispatch
import Futures
import Locking

/// What a ``BluetoothSession`` keeps to list and stream ``ForeignConnection``s: the devices whose
/// `Device1.Connect` met `InProgress` (another client's attempt), the stream of the list, and
/// the tree observation feeding it (made by the first ``BluetoothSession/whenForeignConnectionsChange()``).
///
/// Lists are computed and pushed on one serial queue, so the stream never delivers an older list
/// after a newer one.
final class ForeignConnectionWatch: Sendable {
    private struct State {
        /// Devices whose Connect was answered InProgress while no attempt of ours held them.
        var pending: Set<ObjectPath> = []
        /// Links a manager of ours is taking down outside its connection's state machine
        /// (``Peripheral/terminate()``): `Device1.Disconnect` sent, not answered yet.
        var closing: [ObjectPath: Int] = [:]
        /// Devices a fresh `GetManagedObjects` found connected while the cache had no
        /// `Connected = true` (bluetoothd did not signal it); dropped at the device's next
        /// `Connected` signal or removal.
        var unsignalled: Set<ObjectPath> = []
        var stream: StreamPromise<[ForeignConnection]>?
        var observation: ObjectTreeObservation?
        var last: [ForeignConnection]?
    }
    // Sendable through this lock; nothing is pushed to the stream under it.
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "bluecap.foreign-connections")

    /// The devices recorded as held by another client's pending attempt.
    var pendingPaths: Set<ObjectPath> { state.withLock { $0.pending } }

    /// Whether a stream is open (recomputations are only worth doing then).
    var isWatching: Bool { state.withLock { $0.stream != nil } }

    /// Records (or clears) that another client's attempt holds `path`. Returns whether it changed.
    @discardableResult
    func setPending(_ path: ObjectPath, _ on: Bool) -> Bool {
        state.withLock { s in on ? s.pending.insert(path).inserted : s.pending.remove(path) != nil }
    }

    /// The devices connected without a `Connected = true` signal (see ``State/unsignalled``).
    var unsignalledLinks: Set<ObjectPath> { state.withLock { $0.unsignalled } }

    /// Replaces the unsignalled links with what a fresh read found.
    func setUnsignalled(_ links: Set<ObjectPath>) { state.withLock { $0.unsignalled = links } }

    /// A `Connected` signal for `path`, or its removal: the cache is right about it again.
    func signalled(_ path: ObjectPath) { state.withLock { _ = $0.unsignalled.remove(path) } }

    /// Whether a terminated peripheral's `Device1.Disconnect` on `path` is still on its way.
    func isClosing(_ path: ObjectPath) -> Bool { state.withLock { $0.closing[path] != nil } }

    /// Counts a `Device1.Disconnect` a terminated peripheral sent (`true`), or its answer (`false`).
    func closing(_ path: ObjectPath, _ sent: Bool) {
        state.withLock { s in
            let n = (s.closing[path] ?? 0) + (sent ? 1 : -1)
            s.closing[path] = n > 0 ? n : nil
        }
    }

    /// Drops pending records whose device is gone or connected now.
    func prunePending(keeping alive: (ObjectPath) -> Bool) {
        state.withLock { s in s.pending = s.pending.filter(alive) }
    }

    /// The stream (made on first use with `observe`, which returns the tree observation that feeds it).
    func stream(observe: () -> ObjectTreeObservation?) -> (FutureStream<[ForeignConnection]>, isNew: Bool) {
        let (stream, isNew) = state.withLock { s -> (StreamPromise<[ForeignConnection]>, Bool) in
            if let p = s.stream { return (p, false) }
            let p = StreamPromise<[ForeignConnection]>(capacity: 1)
            s.stream = p
            return (p, true)
        }
        if isNew, let observation = observe() {
            let stale = state.withLock { s -> ObjectTreeObservation? in
                defer { s.observation = observation }
                return s.observation
            }
            stale?.cancel()
        }
        return (stream.stream, isNew)
    }

    /// Computes the list on the watch's queue and pushes it when it differs from the last one
    /// pushed (always the first time).
    func recompute(_ compute: @escaping @Sendable () -> [ForeignConnection]) {
        queue.async { [self] in
            let list = compute()
            let stream = state.withLock { s -> StreamPromise<[ForeignConnection]>? in
                guard let stream = s.stream, s.last != list else { return nil }
                s.last = list
                return stream
            }
            stream?.success(list)
        }
    }

    /// Ends the stream (the session closed).
    func finish() {
        let (stream, observation) = state.withLock { s in
            defer { s.stream = nil; s.observation = nil; s.pending = [] }
            return (s.stream, s.observation)
        }
        observation?.cancel()
        stream?.finish()
    }
}
