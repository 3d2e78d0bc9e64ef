import Synchronization

// MARK: - StreamEvent

/// What a stream delivers to a subscriber: a result, or the end of the stream.
enum StreamEvent<T: Sendable>: Sendable {
    case item(Result<T, any Error>)
    case finished
}

// MARK: - StreamSubscriber

/// One subscription to a ``FutureStream``: an ordered queue of events drained on the
/// subscriber's context, one event at a time.
///
/// The stream appends events while holding its own lock (so every subscriber sees the stream's
/// order, replayed results first), then calls ``schedule()`` after releasing it. The drain loop
/// runs user code with no lock held and never concurrently with itself.
///
/// The queue holds deliveries that are in flight to a slow callback, like the backlog of a
/// dispatch queue; it is not a replay buffer and empties as the context runs.
final class StreamSubscriber<T: Sendable>: Sendable {
    private struct State {
        var pending = RingBuffer<StreamEvent<T>>()
        var isDraining = false
    }

    let id: Int
    private let context: any ExecutionContext
    private let body: @Sendable (StreamEvent<T>) -> Void
    // Sendable through `state` (a `Locked` pthread mutex) and `isActive` (an atomic).
    private let state = Locked(State())
    private let isActive = Atomic<Bool>(true)
    private let token: CancelToken?
    private let tokenID = Atomic<Int>(0)

    init(
        id: Int, context: any ExecutionContext, token: CancelToken?,
        body: @escaping @Sendable (StreamEvent<T>) -> Void
    ) {
        self.id = id
        self.context = context
        self.token = token
        self.body = body
    }

    /// Records the id of this subscription's entry in its cancel token; the entry is removed
    /// when the stream's end is delivered.
    func attach(tokenID id: Int) {
        tokenID.store(id, ordering: .releasing)
    }

    /// Queues `event`. May be called with the stream's lock held (takes only this one's).
    func enqueue(_ event: StreamEvent<T>) {
        state.withLock { $0.pending.append(event) }
    }

    /// Starts a drain on the context unless one is running or nothing is queued.
    func schedule() {
        let start = state.withLock { state -> Bool in
            guard !state.isDraining, !state.pending.isEmpty else { return false }
            state.isDraining = true
            return true
        }
        if start { context.execute { self.drain() } }
    }

    /// Stops delivery: events not yet delivered are dropped.
    func deactivate() {
        isActive.store(false, ordering: .releasing)
        state.withLock { _ = $0.pending.removeAll() }
    }

    private func drain() {
        while true {
            let batch = state.withLock { state -> [StreamEvent<T>] in
                guard isActive.load(ordering: .acquiring), !state.pending.isEmpty else {
                    state.isDraining = false
                    return []
                }
                return state.pending.removeAll()
            }
            guard !batch.isEmpty else { return }
            for event in batch {
                guard isActive.load(ordering: .acquiring) else { break }
                if case .finished = event, let token,
                   !token.unregister(tokenID.load(ordering: .acquiring)) {
                    break  // cancel() won the race for this subscription
                }
                body(event)
            }
        }
    }
}
