// MARK: - Timing operators
//
// Timers come from the context's `schedule(after:_:)` (so a ``ManualContext`` drives them with
// its virtual clock) and are cancelled as soon as they are no longer needed. The subscription
// runs on the same context. When the new stream is abandoned, the timer is cancelled and the
// subscription to this stream ends.

extension FutureStream {
    /// A stream with this stream's results that fails and ends when no result arrives within
    /// `delay`: measured from this call, then again from each result (failed ones too). When
    /// `delay` passes without one, the new stream gets ``FuturesError/timeout(after:)`` (carrying
    /// `delay`) as its last result and finishes, and its subscription to this stream ends
    /// (abandoning this stream if nothing else subscribes). If this stream finishes first, the
    /// new one finishes with it and the timer is cancelled. Buffers nothing.
    public func timeout(
        after delay: Duration,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        let operation = OperatorState<TimerSlot, T>(TimerSlot(), promise: StreamPromise(capacity: capacity ?? self.capacity))
        let token = CancelToken()
        @Sendable func arm(_ generation: Int) {
            let timer = context.schedule(after: delay) {
                let fired = operation.update { slot, events -> Bool in
                    guard slot.fires(generation) else { return false }
                    slot.isDone = true
                    events.append(.item(.failure(FuturesError.timeout(after: delay))))
                    events.append(.finished)
                    return true
                }
                if fired { token.cancel() }
            }
            operation.update { slot, _ in slot.install(timer, for: generation) }?.cancel()
        }
        arm(0)
        subscribe(context: context, token: token) { event in
            switch event {
            case .item(let result):
                let (generation, old) = operation.update { slot, events -> (Int?, ScheduledTask?) in
                    guard !slot.isDone else { return (nil, nil) }
                    let old = slot.bump()
                    events.append(.item(result))
                    return (slot.generation, old)
                }
                old?.cancel()
                if let generation { arm(generation) }
            case .finished:
                operation.update { slot, events -> ScheduledTask? in
                    if !slot.isDone { events.append(.finished) }
                    return slot.close()
                }?.cancel()
            }
        }
        operation.promise.onAbandoned {
            operation.update { slot, _ in slot.close() }?.cancel()
            token.cancel()
        }
        return operation.promise.stream
    }

    /// ``timeout(after:capacity:context:)`` with the delay in seconds (`timeout(after: 10.0)`).
    public func timeout(
        after seconds: Double,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        timeout(after: .seconds(seconds), capacity: capacity, context: context)
    }

    /// A stream that passes on a result only once `interval` has passed without another one
    /// after it: of a burst of results closer together than `interval`, only the last arrives,
    /// `interval` after it. Failed results are debounced like values. When this stream
    /// finishes, a result still waiting is passed on at once, then the new stream finishes.
    /// Buffers one result (the latest waiting one).
    public func debounce(
        _ interval: Duration,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        let operation = OperatorState<(slot: TimerSlot, pending: Result<T, any Error>?), T>(
            (TimerSlot(), nil), promise: StreamPromise(capacity: capacity ?? self.capacity))
        let id = subscribe(context: context, token: nil) { event in
            switch event {
            case .item(let result):
                let (generation, old) = operation.update { state, _ -> (Int?, ScheduledTask?) in
                    guard !state.slot.isDone else { return (nil, nil) }
                    let old = state.slot.bump()
                    state.pending = result
                    return (state.slot.generation, old)
                }
                old?.cancel()
                guard let generation else { return }
                let timer = context.schedule(after: interval) {
                    operation.update { state, events in
                        guard state.slot.fires(generation), let pending = state.pending else { return }
                        state.pending = nil
                        events.append(.item(pending))
                    }
                }
                operation.update { state, _ in state.slot.install(timer, for: generation) }?.cancel()
            case .finished:
                operation.update { state, events -> ScheduledTask? in
                    if let pending = state.pending { events.append(.item(pending)) }
                    state.pending = nil
                    events.append(.finished)
                    return state.slot.close()
                }?.cancel()
            }
        }
        operation.promise.onAbandoned {
            operation.update { state, _ -> ScheduledTask? in
                state.pending = nil
                return state.slot.close()
            }?.cancel()
        }
        link(operation.promise.stream, to: id)
        return operation.promise.stream
    }

    /// A stream that passes on at most one result per `interval`: a result arriving when none
    /// was passed on during the last `interval` is passed on at once and opens an `interval`;
    /// of the results arriving during it, the latest is passed on when it ends (and opens the
    /// next). Failed results are throttled like values. When this stream finishes, a result
    /// still waiting is passed on at once, then the new stream finishes. Buffers one result
    /// (the latest waiting one).
    public func throttle(
        _ interval: Duration,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        typealias State = (slot: TimerSlot, isOpen: Bool, pending: Result<T, any Error>?)
        let operation = OperatorState<State, T>((TimerSlot(), false, nil), promise: StreamPromise(capacity: capacity ?? self.capacity))
        // Opens an interval: when it ends, the waiting result (if any) is passed on and opens the next.
        @Sendable func open(_ generation: Int) {
            let timer = context.schedule(after: interval) {
                let next = operation.update { state, events -> Int? in
                    guard state.slot.fires(generation) else { return nil }
                    guard let pending = state.pending else {
                        state.isOpen = false
                        return nil
                    }
                    state.pending = nil
                    events.append(.item(pending))
                    _ = state.slot.bump()
                    return state.slot.generation
                }
                if let next { open(next) }
            }
            operation.update { state, _ in state.slot.install(timer, for: generation) }?.cancel()
        }
        let id = subscribe(context: context, token: nil) { event in
            switch event {
            case .item(let result):
                let generation = operation.update { state, events -> Int? in
                    guard !state.slot.isDone else { return nil }
                    guard !state.isOpen else {
                        state.pending = result
                        return nil
                    }
                    state.isOpen = true
                    events.append(.item(result))
                    _ = state.slot.bump()
                    return state.slot.generation
                }
                if let generation { open(generation) }
            case .finished:
                operation.update { state, events -> ScheduledTask? in
                    if let pending = state.pending { events.append(.item(pending)) }
                    state.pending = nil
                    events.append(.finished)
                    return state.slot.close()
                }?.cancel()
            }
        }
        operation.promise.onAbandoned {
            operation.update { state, _ -> ScheduledTask? in
                state.pending = nil
                return state.slot.close()
            }?.cancel()
        }
        link(operation.promise.stream, to: id)
        return operation.promise.stream
    }

    /// ``debounce(_:capacity:context:)`` with the interval in seconds (`debounce(0.25)`).
    public func debounce(
        _ seconds: Double,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        debounce(.seconds(seconds), capacity: capacity, context: context)
    }

    /// ``throttle(_:capacity:context:)`` with the interval in seconds (`throttle(1.0)`).
    public func throttle(
        _ seconds: Double,
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault
    ) -> FutureStream<T> {
        throttle(.seconds(seconds), capacity: capacity, context: context)
    }
}
