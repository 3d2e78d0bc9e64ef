import Locking

// MARK: - CancelToken

/// Cancels callbacks registered with it.
///
/// Pass a token as `cancelToken:` to `onComplete`, `map`, a stream subscription and so on.
/// ``cancel()`` removes every callback registered with the token that has not started yet: a
/// future's pending callback never runs, a stream subscription receives nothing more. A
/// cancellation is permanent: a callback registered with an already cancelled token never runs.
/// Futures derived through a cancelled callback (e.g. the result of `map`) never complete.
public final class CancelToken: Sendable {
    private struct State {
        var isCancelled = false
        var nextID = 0
        var pending: [Int: @Sendable (Int) -> Void] = [:]
    }

    // Sendable through this lock: all mutable state lives inside it.
    private let state = Locked(State())

    /// Creates a token that is not cancelled.
    public init() {}

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// The number of registered callbacks that have neither run nor been cancelled.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Cancels every pending callback registered with this token, and every later registration.
    /// - Returns: `true` if at least one pending callback was cancelled.
    @discardableResult
    public func cancel() -> Bool {
        let taken = state.withLock { state -> [Int: @Sendable (Int) -> Void] in
            state.isCancelled = true
            let taken = state.pending
            state.pending = [:]
            return taken
        }
        for (id, canceller) in taken { canceller(id) }
        return !taken.isEmpty
    }

    // MARK: Internal protocol

    /// Registers a pending callback. `canceller` runs (with the returned id) if `cancel()` takes
    /// the entry. Returns nil when the token is already cancelled: the caller must not register.
    @usableFromInline
    func register(_ canceller: @escaping @Sendable (Int) -> Void) -> Int? {
        state.withLock { state in
            guard !state.isCancelled else { return nil }
            state.nextID += 1
            state.pending[state.nextID] = canceller
            return state.nextID
        }
    }

    /// Removes entry `id`. Returns `true` if it was still pending: exactly one of the callback
    /// (which calls this before running) and `cancel()` wins.
    @usableFromInline
    func unregister(_ id: Int) -> Bool {
        state.withLock { $0.pending.removeValue(forKey: id) != nil }
    }
}
