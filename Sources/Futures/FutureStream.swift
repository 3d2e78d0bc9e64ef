import Locking

// MARK: - FutureStream

/// A sequence of results that arrive over time, fed by a ``StreamPromise``.
///
/// **Replay.** The stream keeps its last `capacity` results (default ``defaultCapacity``, 100).
/// A new subscriber first receives the kept results, oldest first, then live ones, as in
/// SimpleFutures. When the buffer is full, a new result drops the OLDEST kept one: memory never
/// grows beyond `capacity` results, however many are pushed.
///
/// **Slow subscribers.** Each subscription queues the deliveries its callback has not taken yet,
/// bounded by ``subscriberBacklog``: the larger of `capacity` and ``minimumSubscriberBacklog``
/// (1,000). A subscriber that many results behind loses its OLDEST waiting result for each new
/// one (counted by ``droppedCount``). The producer never blocks and memory stays bounded; a slow
/// subscriber sees the newest results. The floor exists because `capacity` is a replay size: a
/// "latest state" stream has capacity 1, and so has every stream derived from it with `map` or
/// `flatMap`; bounding live deliveries by it would lose a result whenever the subscriber's
/// context is busy for the time two results take to arrive.
///
/// **Completion.** A stream may be finished (``StreamPromise/finish()``); subscribers then get
/// the kept results and their ``onFinish(context:cancelToken:_:)`` callback, and nothing after.
///
/// **Cancellation.** A subscription made with a ``CancelToken`` stops for good when the token is
/// cancelled, including deliveries already queued.
///
/// **Abandonment.** A stream that had at least one subscription, and whose subscriptions have
/// all been cancelled since, while it is not finished, is *abandoned*: nobody receives its
/// results any more, and ``StreamPromise/onAbandoned(_:)`` tells the producer to stop. The
/// library's consumers cancel their subscription when they stop consuming: `first()` after its
/// result, `take(n)` after the n-th, an async iteration over ``values`` or ``results`` that
/// ends, and every derived stream or future (`map`, `withFilter`, `flatMap`, the operators)
/// once it is abandoned itself; a `flatMap` or `recoverWith` then also ends its subscriptions
/// to the inner streams and removes its callbacks on the inner futures still pending. So
/// abandonment travels up a chain to its sources, and on through futures (``Promise`` lists
/// the future combinators, which all pass it on). A subscription made without a token
/// (`onSuccess { … }`) keeps the stream wanted for good. Abandonment is final: a later
/// subscriber gets the kept results and whatever the producer still pushes.
///
/// Each subscription's callbacks run one at a time, in stream order, on its context.
public final class FutureStream<T: Sendable>: Sendable {
    /// The replay capacity used when none is given: 100 results.
    public static var defaultCapacity: Int { 100 }

    /// The smallest bound on the deliveries waiting for one subscription: 1,000 results.
    public static var minimumSubscriberBacklog: Int { 1_000 }

    /// How many results the stream keeps for replay to new subscribers.
    public let capacity: Int

    /// How many results may wait for one subscription before the oldest waiting one is
    /// dropped: `max(capacity, minimumSubscriberBacklog)`.
    public var subscriberBacklog: Int { Swift.max(capacity, Self.minimumSubscriberBacklog) }

    @usableFromInline
    struct State {
        @usableFromInline var kept = RingBuffer<Result<T, any Error>>()
        @usableFromInline var subscribers: [StreamSubscriber<T>] = []
        @usableFromInline var nextID = 0
        @usableFromInline var isFinished = false
        @usableFromInline var dropped = 0
        /// Set once every subscription was cancelled while the stream was open.
        @usableFromInline var isAbandoned = false
        /// The ``StreamPromise/onAbandoned(_:)`` handlers, released when the stream finishes.
        @usableFromInline var abandonHandlers = CallbackList<@Sendable () -> Void>()
        @usableFromInline init() {}
    }

    // Sendable through this lock: kept results, subscribers and the finished flag live in it.
    @usableFromInline let state = Locked(State())

    init(capacity: Int) {
        precondition(capacity >= 1, "a FutureStream needs a capacity of at least 1")
        self.capacity = capacity
    }

    // MARK: State

    /// The kept results, oldest first (at most ``capacity``).
    public var keptResults: [Result<T, any Error>] { state.withLock { $0.kept.elements } }

    /// The number of kept results (at most ``capacity``).
    public var keptCount: Int { state.withLock { $0.kept.count } }

    /// Whether the stream has finished.
    public var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Whether the stream was abandoned (see ``StreamPromise/onAbandoned(_:)``).
    public var isAbandoned: Bool { state.withLock { $0.isAbandoned } }

    /// The number of active subscriptions.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// How many deliveries were dropped, over all subscriptions, because a subscriber was
    /// ``subscriberBacklog`` results behind (its callback slower than the producer): each drop is
    /// the oldest result still waiting for that subscriber. Zero as long as every subscriber keeps up.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// The number of deliveries waiting for each active subscription (for tests and diagnostics).
    var pendingDeliveryCounts: [Int] { state.withLock { $0.subscribers.map(\.pendingCount) } }

    // MARK: Callbacks

    /// Calls `completion` with each result: the kept ones first, then each new one.
    @inlinable
    public func onComplete(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        subscribe(context: context, token: cancelToken) { event in
            if case .item(let result) = event { completion(result) }
        }
    }

    /// Calls `success` with each successful value (kept ones first).
    @inlinable
    public func onSuccess(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ success: @escaping @Sendable (T) -> Void
    ) {
        onComplete(context: context, cancelToken: cancelToken) { result in
            if case .success(let value) = result { success(value) }
        }
    }

    /// Calls `failure` with each failed result (kept ones first).
    @inlinable
    public func onFailure(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ failure: @escaping @Sendable (any Error) -> Void
    ) {
        onComplete(context: context, cancelToken: cancelToken) { result in
            if case .failure(let error) = result { failure(error) }
        }
    }

    /// Calls `finished` once the stream has finished (after every result was delivered to
    /// this subscription).
    @inlinable
    public func onFinish(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ finished: @escaping @Sendable () -> Void
    ) {
        subscribe(context: context, token: cancelToken) { event in
            if case .finished = event { finished() }
        }
    }

    // MARK: Internal core

    /// Adds a subscriber: replays the kept results, then live events. Returns the
    /// subscription's id for ``cancelSubscription(id:)``, or nil if `token` was cancelled.
    @usableFromInline @discardableResult
    func subscribe(
        context: any ExecutionContext,
        token: CancelToken?,
        _ body: @escaping @Sendable (StreamEvent<T>) -> Void
    ) -> Int? {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let subscriber = StreamSubscriber(id: id, limit: subscriberBacklog, context: context, token: token, body: body)
        if let token {
            let registered = token.register { [weak self, weak subscriber] _ in
                subscriber?.deactivate()
                self?.removeSubscriber(id: id)
            }
            guard let tokenID = registered else { return nil }
            subscriber.attach(tokenID: tokenID)
        }
        let mustStart = state.withLock { state -> Bool in
            var mustStart = false
            for result in state.kept.elements where subscriber.enqueue(.item(result)).mustStart { mustStart = true }
            if state.isFinished {
                if subscriber.enqueue(.finished).mustStart { mustStart = true }
            } else if subscriber.isActive.load(ordering: .acquiring) {
                // (Not when its token was cancelled since `register`: the canceller, having
                // found nothing to remove, would leave it subscribed for good.)
                state.subscribers.append(subscriber)
            }
            return mustStart
        }
        if mustStart { subscriber.startDrain() }
        return id
    }

    /// Pushes `event` (and, if `finishing`, the end of the stream). Returns `false` once finished.
    /// Inlinable: a pusher of a concrete element type gets it specialised.
    @inlinable
    func push(_ event: StreamEvent<T>, finishing: Bool = false) -> Bool {
        // Usually one subscriber: kept out of the array to avoid allocating one per push.
        var first: StreamSubscriber<T>?
        // Set when `first` claimed its drain with `event` not queued: the drain then runs right
        // away on this thread's trampoline and is handed `event` directly.
        var direct: Trampoline?
        var more: [StreamSubscriber<T>] = []
        var handlers = CallbackList<@Sendable () -> Void>()
        let open = state.withLock { state -> Bool in
            guard !state.isFinished else { return false }
            var isItem = false
            if case .item(let result) = event {
                state.kept.append(result, droppingOldestBeyond: capacity)
                isItem = true
            }
            for subscriber in state.subscribers {
                // An immediate subscriber whose drain would run at once (this thread's
                // trampoline is idle) never holds `event` in its queue.
                if isItem && !finishing && first == nil && subscriber.isImmediate {
                    let trampoline = Trampoline.current
                    if !trampoline.isDraining {
                        guard let outcome = subscriber.claimOrEnqueue(event) else {
                            first = subscriber
                            direct = trampoline
                            continue
                        }
                        if outcome.dropped { state.dropped += 1 }
                        if outcome.mustStart { first = subscriber }
                        continue
                    }
                }
                var outcome = subscriber.enqueue(event)
                if finishing {
                    let end = subscriber.enqueue(.finished)
                    outcome.mustStart = outcome.mustStart || end.mustStart
                }
                if outcome.dropped { state.dropped += 1 }
                if outcome.mustStart {
                    if first == nil { first = subscriber } else { more.append(subscriber) }
                }
            }
            if case .finished = event { state.isFinished = true }
            if finishing { state.isFinished = true }
            if state.isFinished {
                state.subscribers = []
                if !state.abandonHandlers.isEmpty { handlers = state.abandonHandlers.takeAll() }
            }
            return true
        }
        _ = handlers  // released after the lock (they may own anything)
        guard open else { return false }
        if let first {
            if let direct { first.startDrain(delivering: event, on: direct) } else { first.startDrain() }
        }
        for subscriber in more { subscriber.startDrain() }
        return true
    }

    /// Ends subscription `id` (made by ``subscribe(context:token:_:)``): nothing more is
    /// delivered to it, and its cancel token no longer holds it. The stream is abandoned if that
    /// was its last subscription. Harmless if the subscription already ended.
    @usableFromInline
    func cancelSubscription(id: Int) {
        guard let subscriber = removeSubscriber(id: id) else { return }
        subscriber.deactivate()
        if let token = subscriber.token { _ = token.unregister(subscriber.tokenID.load(ordering: .acquiring)) }
    }

    /// Removes subscription `id`; when that leaves an open stream with none, the stream is
    /// abandoned and its handlers run (once, on this thread's trampoline, no lock held).
    @discardableResult
    private func removeSubscriber(id: Int) -> StreamSubscriber<T>? {
        let (removed, handlers) = state.withLock { state -> (StreamSubscriber<T>?, CallbackList<@Sendable () -> Void>) in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return (nil, CallbackList()) }
            let removed = state.subscribers.remove(at: index)
            guard state.subscribers.isEmpty, !state.isFinished, !state.isAbandoned else { return (removed, CallbackList()) }
            state.isAbandoned = true
            return (removed, state.abandonHandlers.takeAll())
        }
        handlers.forEach { handler in Trampoline.current.run(handler) }
        return removed
    }

    /// Runs `handler` once if the stream is abandoned (at once if it already was); drops it
    /// when the stream finishes first.
    func onAbandoned(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.isFinished { return false }
            if state.isAbandoned { return true }
            state.abandonHandlers.append(handler)
            return false
        }
        if runNow { Trampoline.current.run(handler) }
    }

    /// Makes the abandonment of `derived` end subscription `id` to this stream.
    func link<M>(_ derived: FutureStream<M>, to id: Int?) {
        guard let id else { return }
        derived.onAbandoned { [weak self] in self?.cancelSubscription(id: id) }
    }

    /// Makes the abandonment of `derived` end subscription `id` to this stream.
    func link<M>(_ derived: Future<M>, to id: Int?) {
        guard let id else { return }
        derived.onAbandoned { [weak self] in self?.cancelSubscription(id: id) }
    }
}
