import Synchronization
import Locking

// MARK: - Transforming a FutureStream
//
// Every combinator returns a new stream that subscribes to this one (so it first receives the
// kept results) and finishes when this one finishes. `capacity: nil` means "same capacity as
// this stream". When the new stream is abandoned (all its subscriptions cancelled), its
// subscription to this one ends, so this one may be abandoned in turn, and so do its
// subscriptions to the inner streams of `flatMap` and its callbacks on the inner futures of
// `flatMap` and `recoverWith` still pending (abandoning each one nothing else waits for).

extension FutureStream {
    /// A stream of `mapping` applied to each successful value; failures pass through, and an
    /// error thrown by `mapping` becomes a failed result.
    public func map<M: Sendable>(
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ mapping: @escaping @Sendable (T) throws -> M
    ) -> FutureStream<M> {
        derive(capacity: capacity, context: context, token: cancelToken) { result, promise in
            switch result {
            case .success(let value): promise.complete(Result { try mapping(value) })
            case .failure(let error): promise.failure(error)
            }
        }
    }

    /// A stream of the results of the futures `mapping` returns, in the order they complete.
    /// It finishes once this stream has finished and every such future has completed.
    /// Abandoning it ends its subscription to this stream and abandons each such future still
    /// pending (if nothing else waits for it).
    public func flatMap<M: Sendable>(
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ mapping: @escaping @Sendable (T) throws -> Future<M>
    ) -> FutureStream<M> {
        let promise = StreamPromise<M>(capacity: capacity ?? self.capacity)
        let inner = InnerWork()
        let id = subscribe(context: context, token: cancelToken) { event in
            switch event {
            case .item(.success(let value)):
                do {
                    inner.forward(try mapping(value), into: promise)
                } catch {
                    promise.failure(error)
                }
            case .item(.failure(let error)):
                promise.failure(error)
            case .finished:
                if inner.sourceFinished() { promise.finish() }
            }
        }
        link(promise.stream, to: id)
        promise.onAbandoned { inner.token.cancel() }
        return promise.stream
    }

    /// A stream merging every result of the streams `mapping` returns. It finishes once this
    /// stream and every such stream have finished.
    public func flatMap<M: Sendable>(
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ mapping: @escaping @Sendable (T) throws -> FutureStream<M>
    ) -> FutureStream<M> {
        let promise = StreamPromise<M>(capacity: capacity ?? self.capacity)
        let inner = InnerWork()
        let id = subscribe(context: context, token: cancelToken) { event in
            switch event {
            case .item(.success(let value)):
                do {
                    let stream = try mapping(value)
                    inner.begin()
                    // Ended by the token when the derived stream is abandoned.
                    stream.subscribe(context: .immediate, token: inner.token) { innerEvent in
                        switch innerEvent {
                        case .item(let result): promise.complete(result)
                        case .finished: if inner.end() { promise.finish() }
                        }
                    }
                } catch {
                    promise.failure(error)
                }
            case .item(.failure(let error)):
                promise.failure(error)
            case .finished:
                if inner.sourceFinished() { promise.finish() }
            }
        }
        link(promise.stream, to: id)
        promise.onAbandoned { inner.token.cancel() }
        return promise.stream
    }

    /// A stream that replaces each failed result with the value `recovery` returns.
    public func recover(
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ recovery: @escaping @Sendable (any Error) throws -> T
    ) -> FutureStream<T> {
        derive(capacity: capacity, context: context, token: cancelToken) { result, promise in
            switch result {
            case .success: promise.complete(result)
            case .failure(let error): promise.complete(Result { try recovery(error) })
            }
        }
    }

    /// A stream that replaces each failed result with the result of the future `recovery`
    /// returns (in completion order). Abandoning it ends its subscription to this stream and
    /// abandons each such future still pending (if nothing else waits for it).
    public func recoverWith(
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ recovery: @escaping @Sendable (any Error) throws -> Future<T>
    ) -> FutureStream<T> {
        let promise = StreamPromise<T>(capacity: capacity ?? self.capacity)
        let inner = InnerWork()
        let id = subscribe(context: context, token: cancelToken) { event in
            switch event {
            case .item(.success):
                if case .item(let result) = event { promise.complete(result) }
            case .item(.failure(let error)):
                do {
                    inner.forward(try recovery(error), into: promise)
                } catch {
                    promise.failure(error)
                }
            case .finished:
                if inner.sourceFinished() { promise.finish() }
            }
        }
        link(promise.stream, to: id)
        promise.onAbandoned { inner.token.cancel() }
        return promise.stream
    }

    /// A stream of the successful values `predicate` accepts; failures pass through.
    public func withFilter(
        capacity: Int? = nil,
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ predicate: @escaping @Sendable (T) throws -> Bool
    ) -> FutureStream<T> {
        derive(capacity: capacity, context: context, token: cancelToken) { result, promise in
            switch result {
            case .success(let value):
                do { if try predicate(value) { promise.success(value) } } catch { promise.failure(error) }
            case .failure(let error):
                promise.failure(error)
            }
        }
    }

    /// Calls `apply` with each successful value (same as `onSuccess`).
    public func forEach(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ apply: @escaping @Sendable (T) -> Void
    ) {
        onSuccess(context: context, cancelToken: cancelToken, apply)
    }

    /// A stream of the first `count` results (kept ones included), finishing after the last;
    /// it then cancels its subscription to this stream (which abandons this stream if that was
    /// its last one). Abandoning the new stream before that cancels the subscription too.
    public func take(_ count: Int) -> FutureStream<T> {
        precondition(count >= 0, "take(_:) needs a non-negative count")
        let promise = StreamPromise<T>(capacity: Swift.max(1, Swift.min(count, capacity)))
        guard count > 0 else {
            promise.finish()
            return promise.stream
        }
        let token = CancelToken()
        let seen = Counter()
        subscribe(context: .immediate, token: token) { event in
            switch event {
            case .item(let result):
                let index = seen.increment()
                guard index <= count else { return }
                promise.complete(result)
                if index == count {
                    promise.finish()
                    token.cancel()
                }
            case .finished:
                promise.finish()
            }
        }
        promise.onAbandoned { token.cancel() }
        return promise.stream
    }

    /// A future of the first result (the oldest kept one, or the next one pushed). Fails with
    /// ``FuturesError/noSuchElement`` if the stream finishes without any result.
    ///
    /// It then cancels its subscription to this stream (which abandons this stream if that was
    /// its last one), as it does when the future is abandoned before a result arrives (for
    /// instance by a `timeout(after:)` that fired).
    public func first() -> Future<T> {
        let promise = Promise<T>()
        let token = CancelToken()
        subscribe(context: .immediate, token: token) { event in
            switch event {
            case .item(let result): promise.complete(result)
            case .finished: promise.failure(FuturesError.noSuchElement)
            }
            token.cancel()
        }
        promise.onAbandoned { token.cancel() }
        return promise.future
    }

    // MARK: Helpers

    func derive<M: Sendable>(
        capacity: Int?,
        context: any ExecutionContext,
        token: CancelToken?,
        _ transform: @escaping @Sendable (Result<T, any Error>, StreamPromise<M>) -> Void
    ) -> FutureStream<M> {
        let promise = StreamPromise<M>(capacity: capacity ?? self.capacity)
        let id = subscribe(context: context, token: token) { event in
            switch event {
            case .item(let result): transform(result, promise)
            case .finished: promise.finish()
            }
        }
        link(promise.stream, to: id)
        return promise.stream
    }
}

// MARK: - Bookkeeping

/// Counts inner futures/streams still running for `flatMap`/`recoverWith`, so the derived
/// stream finishes only when the source and all inner work are done.
final class InnerWork: Sendable {
    // Sendable through this lock.
    private let state = Locked((running: 0, sourceDone: false))
    /// Ends the inner subscriptions, and removes the callbacks on the inner futures, when the
    /// derived stream is abandoned (the derived stream's `onAbandoned` cancels it).
    let token = CancelToken()

    func begin() { state.withLock { $0.running += 1 } }

    /// Pushes the result of the inner `future` to `promise` once it completes, then finishes
    /// `promise` if that was the last inner work of a finished source. The callback is
    /// registered with ``token``: cancelling it removes the callback, which abandons `future` if
    /// nothing else waits for it.
    func forward<M: Sendable>(_ future: Future<M>, into promise: StreamPromise<M>) {
        begin()
        let registered = future.addCallback(context: .immediate, token: token, onCancel: nil) { [self] result in
            promise.complete(result)
            if end() { promise.finish() }
        }
        // The derived stream was abandoned already: this future will deliver nothing.
        if !registered, end() { promise.finish() }
    }

    /// One inner item finished; returns whether the derived stream should now finish.
    func end() -> Bool {
        state.withLock { state in
            state.running -= 1
            return state.sourceDone && state.running == 0
        }
    }

    /// The source finished; returns whether the derived stream should now finish.
    func sourceFinished() -> Bool {
        state.withLock { state in
            state.sourceDone = true
            return state.running == 0
        }
    }
}

/// A shared atomic counter.
final class Counter: Sendable {
    // Sendable through this atomic.
    private let value = Atomic<Int>(0)

    /// Adds one; returns the new value.
    func increment() -> Int {
        value.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
