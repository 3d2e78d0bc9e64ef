import Locking

// MARK: - OperatorState

/// The state of a stream operator that is driven by more than one source of events (its
/// subscription and a timer), with the events it sends to its derived stream.
///
/// ``update(_:)`` changes the state and queues events under one lock, so the derived stream gets
/// them in the order the state changed; one thread at a time then pushes the queued events after
/// releasing the lock (the push may run subscribers' callbacks on ``ImmediateContext``, which must
/// not run under a lock). The queue only holds events in transit: each update queues at most a
/// few, and the draining thread pushes them without waiting.
final class OperatorState<State: Sendable, T: Sendable>: Sendable {
    private struct Box {
        var state: State
        var outbox = RingBuffer<StreamEvent<T>>()
        var isDraining = false
    }

    // Sendable through this lock: the state, the queued events and the drain flag live in it.
    private let box: Locked<Box>
    /// The derived stream's promise.
    let promise: StreamPromise<T>

    init(_ initial: State, promise: StreamPromise<T>) {
        box = Locked(Box(state: initial))
        self.promise = promise
    }

    /// Runs `body` on the state under the lock; the events it appends are pushed to the derived
    /// stream after the lock, in order.
    @discardableResult
    func update<R>(_ body: (inout State, inout [StreamEvent<T>]) -> R) -> R {
        let (value, mustDrain) = box.withLock { box -> (R, Bool) in
            var events: [StreamEvent<T>] = []
            let value = body(&box.state, &events)
            guard !events.isEmpty else { return (value, false) }
            for event in events { box.outbox.append(event) }
            guard !box.isDraining else { return (value, false) }
            box.isDraining = true
            return (value, true)
        }
        if mustDrain { drain() }
        return value
    }

    private func drain() {
        while let event = box.withLock({ box -> StreamEvent<T>? in
            guard let event = box.outbox.popFirst() else {
                box.isDraining = false
                return nil
            }
            return event
        }) {
            switch event {
            case .item(let result): promise.complete(result)
            case .finished: promise.finish()
            }
        }
    }
}

// MARK: - TimerSlot

/// The timer of a timing operator: the armed task and a generation that tells a stale firing
/// (one whose timer was replaced or cancelled after it started) from the current one.
struct TimerSlot {
    var generation = 0
    var task: ScheduledTask?
    /// Set once the derived stream is done (finished, timed out or abandoned).
    var isDone = false

    /// Starts a new generation; returns the timer to cancel (after the lock).
    mutating func bump() -> ScheduledTask? {
        generation += 1
        defer { task = nil }
        return task
    }

    /// Stores `timer` armed for `generation`; returns it back when it is stale (to cancel).
    mutating func install(_ timer: ScheduledTask, for generation: Int) -> ScheduledTask? {
        guard !isDone, generation == self.generation else { return timer }
        task = timer
        return nil
    }

    /// Whether a firing for `generation` is current (the slot is then emptied).
    mutating func fires(_ generation: Int) -> Bool {
        guard !isDone, generation == self.generation else { return false }
        task = nil
        return true
    }

    /// Marks the operator done; returns the timer to cancel.
    mutating func close() -> ScheduledTask? {
        isDone = true
        return bump()
    }
}

// MARK: - SubscriptionSlot

/// The cancel token of an operator's current upstream subscription (`concat` switching streams,
/// `retry` re-subscribing): cancelling the slot ends the current one and every later one.
final class SubscriptionSlot: Sendable {
    // Sendable through this lock.
    private let state = Locked<(token: CancelToken?, isCancelled: Bool)>((nil, false))

    /// A token for a new subscription, replacing the current one (which is not cancelled), or
    /// nil once the slot is cancelled.
    func next() -> CancelToken? {
        state.withLock { state -> CancelToken? in
            guard !state.isCancelled else { return nil }
            let token = CancelToken()
            state.token = token
            return token
        }
    }

    /// Cancels the current subscription and every later one.
    func cancel() {
        let token = state.withLock { state -> CancelToken? in
            state.isCancelled = true
            defer { state.token = nil }
            return state.token
        }
        token?.cancel()
    }
}
