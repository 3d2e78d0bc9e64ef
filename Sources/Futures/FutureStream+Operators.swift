import Locking

// MARK: - Selecting and combining streams
//
// Like the combinators, each operator returns a new stream (replay capacity `capacity`, by
// default this stream's) that subscribes on `context`, gets the kept results first, and ends
// its upstream subscriptions when it is abandoned. None buffers beyond the new stream's replay
// capacity and its subscribers' bounded queues, except where a doc comment says so.

extension FutureStream {
    /// A stream without the first `count` results of this one (failed results count), then
    /// every later result; it finishes when this stream finishes. Buffers nothing.
    public func skip(
        _ count: Int,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        precondition(count >= 0, "skip(_:) needs a non-negative count")
        let seen = Counter()
        return derive(capacity: capacity, context: context, token: nil) { result, promise in
            if seen.increment() > count { promise.complete(result) }
        }
    }

    /// A stream with the results of this stream and `other`, interleaved in the order they
    /// arrive (each stream's kept results first), as the static `merge` of both.
    public func merge(
        _ other: FutureStream<T>,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        FutureStream.merge([self, other], capacity: capacity ?? Swift.max(self.capacity, other.capacity), context: context)
    }

    /// A stream with the results of every stream in `streams`, in the order they arrive (each
    /// stream's kept results first, in list order). It finishes once all of them have finished
    /// (at once for an empty list); a failed result is passed on like any other. Abandoning it
    /// ends its subscription to each of them. Buffers nothing.
    /// - Parameters:
    ///   - streams: the streams to merge.
    ///   - capacity: the new stream's replay capacity; by default the largest of theirs.
    ///   - context: where the subscriptions run.
    public static func merge(
        _ streams: [FutureStream<T>],
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        let promise = StreamPromise<T>(capacity: capacity ?? streams.map(\.capacity).max() ?? defaultCapacity)
        guard !streams.isEmpty else {
            promise.finish()
            return promise.stream
        }
        let token = CancelToken()
        let finished = Counter()
        for stream in streams {
            stream.subscribe(context: context, token: token) { event in
                switch event {
                case .item(let result): promise.complete(result)
                case .finished: if finished.increment() == streams.count { promise.finish() }
                }
            }
        }
        promise.onAbandoned { token.cancel() }
        return promise.stream
    }

    /// A stream with every result of this stream, then, once this one has finished, every
    /// result of `other`; it finishes when `other` finishes. `other` is subscribed to only
    /// then: of the results it produced before, a new subscriber gets the ones it keeps for
    /// replay (its capacity), as any late subscriber does. Abandoning the new stream ends the
    /// current subscription (and `other` is never subscribed to). Buffers nothing.
    public func concat(
        _ other: FutureStream<T>,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        let promise = StreamPromise<T>(capacity: capacity ?? Swift.max(self.capacity, other.capacity))
        let slot = SubscriptionSlot()
        if let first = slot.next() {
            subscribe(context: context, token: first) { event in
                switch event {
                case .item(let result):
                    promise.complete(result)
                case .finished:
                    guard let second = slot.next() else { return }
                    other.subscribe(context: context, token: second) { event in
                        switch event {
                        case .item(let result): promise.complete(result)
                        case .finished: promise.finish()
                        }
                    }
                }
            }
        }
        promise.onAbandoned { slot.cancel() }
        return promise.stream
    }

    /// A stream that runs `makeStream` and passes on its results; when one of them is a failure
    /// that `when` accepts and retries remain, it ends that subscription (abandoning that
    /// stream, so its producer may stop), waits `delay`, and subscribes to a new stream from
    /// `makeStream`.
    ///
    /// - Failures `when` rejects are passed on as ordinary results; the subscription goes on.
    /// - With no retry left, the accepted failure is passed on as the last result and the new
    ///   stream finishes.
    /// - When a stream from `makeStream` finishes, the new stream finishes.
    /// - `times` counts retries over the new stream's whole life (`times: 2` means at most three
    ///   streams), successes in between do not restore it.
    ///
    /// The failure that causes a retry is not passed on. Abandoning the new stream ends the
    /// current subscription and any pending retry. Buffers nothing.
    /// - Parameters:
    ///   - times: how many retries over the new stream's whole life.
    ///   - delay: the pause before each retry.
    ///   - capacity: the new stream's replay capacity.
    ///   - context: where subscriptions run and which clock measures `delay`.
    ///   - shouldRetry: decides whether a failure is retried; by default every failure is.
    ///   - makeStream: makes each stream, the first one included.
    public static func retry(
        times: Int,
        delay: Duration = .zero,
        capacity: Int = defaultCapacity,
        context: any ExecutionContext = .futuresDefault,
        when shouldRetry: @escaping @Sendable (any Error) -> Bool = { _ in true },
        _ makeStream: @escaping @Sendable () -> FutureStream<T>
    ) -> FutureStream<T> {
        precondition(times >= 0, "retry(times:) needs a non-negative count")
        let promise = StreamPromise<T>(capacity: capacity)
        let slot = SubscriptionSlot()
        let pendingTimer = Locked<ScheduledTask?>(nil)
        let retries = Counter()
        @Sendable func attempt() {
            guard let token = slot.next() else { return }
            makeStream().subscribe(context: context, token: token) { event in
                switch event {
                case .item(.failure(let error)) where shouldRetry(error):
                    guard retries.increment() <= times else {
                        promise.finish(throwing: error)
                        token.cancel()
                        return
                    }
                    token.cancel()
                    if delay <= .zero {
                        context.execute { attempt() }
                    } else {
                        let timer = context.schedule(after: delay) { attempt() }
                        pendingTimer.withLock { $0 = timer }
                        if promise.isAbandoned { timer.cancel() }
                    }
                case .item(let result):
                    promise.complete(result)
                case .finished:
                    promise.finish()
                }
            }
        }
        attempt()
        promise.onAbandoned {
            slot.cancel()
            pendingTimer.withLock { $0 }?.cancel()
        }
        return promise.stream
    }

    /// ``retry(times:delay:capacity:context:when:_:)`` with the delay in seconds (`delay: 0.5`).
    public static func retry(
        times: Int,
        delay seconds: Double,
        capacity: Int = defaultCapacity,
        context: any ExecutionContext = .futuresDefault,
        when shouldRetry: @escaping @Sendable (any Error) -> Bool = { _ in true },
        _ makeStream: @escaping @Sendable () -> FutureStream<T>
    ) -> FutureStream<T> {
        retry(times: times, delay: .seconds(seconds), capacity: capacity, context: context, when: shouldRetry, makeStream)
    }
}

// MARK: - Distinct values

extension FutureStream where T: Equatable {
    /// A stream without the successful values equal to the successful value just before them
    /// (`1, 1, 2, 2, 1` gives `1, 2, 1`). A failed result is passed on and starts over: the
    /// value after it is passed on even if it equals the one before the failure (a value seen
    /// again after a disconnection is news). Keeps one value.
    public func distinctUntilChanged(
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        let last = Locked<T?>(nil)
        return derive(capacity: capacity, context: context, token: nil) { result, promise in
            switch result {
            case .success(let value):
                let isNew = last.withLock { last -> Bool in
                    defer { last = value }
                    return last != value
                }
                if isNew { promise.success(value) }
            case .failure:
                last.withLock { $0 = nil }
                promise.complete(result)
            }
        }
    }
}

extension FutureStream where T: Hashable {
    /// A stream of the successful values not seen before, among the last `remembering` distinct
    /// values it passed on (`1, 2, 1, 3, 2` gives `1, 2, 3`); failed results are passed on.
    /// Memory is bounded: once `remembering` values are remembered, the oldest is forgotten (and
    /// passed on again if it comes back).
    public func distinct(
        remembering limit: Int = 1_000,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        precondition(limit >= 1, "distinct(remembering:) needs a limit of at least 1")
        let seen = Locked((set: Set<T>(), order: RingBuffer<T>()))
        return derive(capacity: capacity, context: context, token: nil) { result, promise in
            guard case .success(let value) = result else {
                promise.complete(result)
                return
            }
            let isNew = seen.withLock { seen -> Bool in
                guard seen.set.insert(value).inserted else { return false }
                seen.order.append(value)
                if seen.order.count > limit, let oldest = seen.order.popFirst() { seen.set.remove(oldest) }
                return true
            }
            if isNew { promise.success(value) }
        }
    }
}
