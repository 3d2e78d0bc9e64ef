import Synchronization
import Locking

// MARK: - StreamEvent

/// What a stream delivers to a subscriber: a result, or the end of the stream.
@usableFromInline
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
/// dispatch queue; it is not a replay buffer and empties as the context runs. It is bounded by
/// the stream's ``FutureStream/subscriberBacklog`` (never less than 1,000, whatever the replay
/// capacity) with the replay buffer's policy: when a subscriber is that many results behind, a
/// new result drops the OLDEST waiting one (counted by the stream's
/// ``FutureStream/droppedCount``), so a slow subscriber gets the newest results, never blocks the
/// producer, and never holds more than `limit` results (plus the end of the stream).
///
/// The hot path (``enqueue(_:)``, ``startDrain()``, the drain loop) is inlinable so that a module
/// pushing a concrete element type gets it specialised, without run-time generic metadata
/// lookups; on an ``ImmediateContext`` the drain runs on the thread's trampoline with no closure
/// allocated per delivery.
@usableFromInline
final class StreamSubscriber<T: Sendable>: Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var pending = RingBuffer<StreamEvent<T>>()
        @usableFromInline var isDraining = false
        @usableFromInline init() {}

        /// Queues `event` (see ``StreamSubscriber/enqueue(_:)``) and claims the drain.
        @inlinable
        mutating func enqueue(_ event: StreamEvent<T>, limit: Int) -> Enqueued {
            var dropped = false
            if case .item = event {
                dropped = pending.append(event, droppingOldestBeyond: limit)
            } else {
                pending.append(event)
            }
            let mustStart = !isDraining
            isDraining = true
            return Enqueued(dropped: dropped, mustStart: mustStart)
        }
    }

    /// What ``enqueue(_:)`` did.
    @usableFromInline
    struct Enqueued {
        /// The oldest waiting result was dropped to make room.
        @usableFromInline var dropped: Bool
        /// No drain was running: the caller must call ``startDrain()`` (after releasing its lock).
        @usableFromInline var mustStart: Bool
        @usableFromInline init(dropped: Bool, mustStart: Bool) {
            self.dropped = dropped
            self.mustStart = mustStart
        }
    }

    @usableFromInline let id: Int
    /// The most results waiting for delivery (the stream's ``FutureStream/subscriberBacklog``).
    @usableFromInline let limit: Int
    @usableFromInline let context: any ExecutionContext
    /// Whether `context` is an ``ImmediateContext`` (the drain then runs on the trampoline).
    @usableFromInline let isImmediate: Bool
    @usableFromInline let body: @Sendable (StreamEvent<T>) -> Void
    // Sendable through `state` (a `Locked` pthread mutex) and `isActive` (an atomic).
    @usableFromInline let state = Locked(State())
    @usableFromInline let isActive = Atomic<Bool>(true)
    @usableFromInline let token: CancelToken?
    @usableFromInline let tokenID = Atomic<Int>(0)

    init(
        id: Int, limit: Int, context: any ExecutionContext, token: CancelToken?,
        body: @escaping @Sendable (StreamEvent<T>) -> Void
    ) {
        self.id = id
        self.limit = limit
        self.context = context
        self.isImmediate = context is ImmediateContext
        self.token = token
        self.body = body
    }

    /// Records the id of this subscription's entry in its cancel token; the entry is removed
    /// when the stream's end is delivered.
    func attach(tokenID id: Int) {
        tokenID.store(id, ordering: .releasing)
    }

    /// Queues `event`, dropping the oldest waiting result if `limit` results are already
    /// waiting (the end of the stream is never dropped), and claims the drain when none is
    /// running (`mustStart`: the caller then calls ``startDrain()``).
    /// May be called with the stream's lock held (takes only this one's).
    @inlinable
    func enqueue(_ event: StreamEvent<T>) -> Enqueued {
        state.withLock { $0.enqueue(event, limit: limit) }
    }

    /// For a result to an immediate subscriber whose drain would start at once on the calling
    /// thread: when no drain is running and nothing is waiting, claims the drain without
    /// queueing `event` and returns nil (the caller hands `event` to
    /// ``startDrain(delivering:on:)`` after releasing its lock); otherwise queues it as
    /// ``enqueue(_:)`` does. A subscriber that keeps up gets each result without a trip through
    /// its queue and with one lock round trip less; since it is delivered before the caller
    /// returns, it could not have been dropped from the queue either.
    @inlinable
    func claimOrEnqueue(_ event: StreamEvent<T>) -> Enqueued? {
        state.withLock { state in
            if !state.isDraining && state.pending.isEmpty {
                state.isDraining = true
                return nil
            }
            return state.enqueue(event, limit: limit)
        }
    }

    /// The number of deliveries waiting (for tests and diagnostics).
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Runs the drain claimed by ``enqueue(_:)`` on the context.
    @inlinable
    func startDrain() {
        if isImmediate {
            Trampoline.current.run({ (subscriber: StreamSubscriber<T>) in subscriber.drain() }, with: self)
        } else {
            context.execute { self.drain() }
        }
    }

    /// Runs the drain claimed by ``claimOrEnqueue(_:)`` without queueing, on `trampoline` (the
    /// calling thread's, idle): delivers `event` first, then whatever was queued meanwhile.
    @inlinable
    func startDrain(delivering event: StreamEvent<T>, on trampoline: Trampoline) {
        trampoline.run({ (job: (StreamSubscriber<T>, StreamEvent<T>)) in job.0.drain(after: job.1) }, with: (self, event))
    }

    /// Delivers `event` (a result that was never queued) unless the subscription was
    /// deactivated, then drains the queue.
    @inlinable
    func drain(after event: StreamEvent<T>) {
        if isActive.load(ordering: .acquiring) { body(event) }
        drain()
    }

    /// Stops delivery: events not yet delivered are dropped.
    func deactivate() {
        isActive.store(false, ordering: .releasing)
        state.withLock { _ = $0.pending.removeAll() }
    }

    /// Delivers waiting events one at a time (so a result dropped while the callback is busy is
    /// always the oldest still waiting) until none is left or the subscription is deactivated.
    @inlinable
    func drain() {
        while true {
            let next = state.withLock { state -> StreamEvent<T>? in
                guard isActive.load(ordering: .acquiring), let event = state.pending.popFirst() else {
                    state.isDraining = false
                    return nil
                }
                return event
            }
            guard let event = next else { return }
            if case .finished = event, let token,
               !token.unregister(tokenID.load(ordering: .acquiring)) {
                continue  // cancel() won the race for this subscription; it deactivates it
            }
            body(event)
        }
    }
}
