import Locking

// MARK: - Transforming a Future

extension Future {
    /// A future completed with `mapping` applied to this future's value; failures (and errors
    /// thrown by `mapping`) pass through.
    @inlinable
    public func map<M: Sendable>(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ mapping: @escaping @Sendable (T) throws -> M
    ) -> Future<M> {
        derive(context: context, token: cancelToken) { (promise: Promise<M>) in
            { result in
                switch result {
                case .success(let value): promise.complete(Result { try mapping(value) })
                case .failure(let error): promise.failure(error)
                }
            }
        }
    }

    /// A future completed with the future returned by `mapping` for this future's value.
    /// Chains of any length run iteratively (see ``ImmediateContext``).
    @inlinable
    public func flatMap<M: Sendable>(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ mapping: @escaping @Sendable (T) throws -> Future<M>
    ) -> Future<M> {
        derive(context: context, token: cancelToken) { (promise: Promise<M>) in
            { result in
                switch result {
                case .success(let value):
                    do { promise.completeWith(future: try mapping(value)) } catch { promise.failure(error) }
                case .failure(let error):
                    promise.failure(error)
                }
            }
        }
    }

    /// A stream fed by the stream that `mapping` returns for this future's value. If this
    /// future (or `mapping`) fails, the stream carries the error and finishes.
    /// - Parameters:
    ///   - capacity: how many results the new stream keeps for replay.
    ///   - context: where `mapping` runs.
    ///   - cancelToken: cancels the callback before it runs.
    ///   - mapping: makes the stream from this future's value.
    @inlinable
    public func flatMap<M: Sendable>(
        capacity: Int = FutureStream<M>.defaultCapacity,
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ mapping: @escaping @Sendable (T) throws -> FutureStream<M>
    ) -> FutureStream<M> {
        let promise = StreamPromise<M>(capacity: capacity)
        let route = addRemovableCallback(context: context, token: cancelToken) { result in
            switch result {
            case .success(let value):
                do { promise.completeWith(stream: try mapping(value)) } catch { promise.finish(throwing: error) }
            case .failure(let error):
                promise.finish(throwing: error)
            }
        }
        if let route { promise.onAbandoned { [weak self] in self?.dropInterest(route) } }
        return promise.stream
    }

    /// A future that replaces a failure with the value `recovery` returns for the error.
    @inlinable
    public func recover(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ recovery: @escaping @Sendable (any Error) throws -> T
    ) -> Future<T> {
        derive(context: context, token: cancelToken) { (promise: Promise<T>) in
            { result in
                switch result {
                case .success: promise.complete(result)
                case .failure(let error): promise.complete(Result { try recovery(error) })
                }
            }
        }
    }

    /// A future that replaces a failure with the result of the future `recovery` returns.
    @inlinable
    public func recoverWith(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ recovery: @escaping @Sendable (any Error) throws -> Future<T>
    ) -> Future<T> {
        derive(context: context, token: cancelToken) { (promise: Promise<T>) in
            { result in
                switch result {
                case .success:
                    promise.complete(result)
                case .failure(let error):
                    do { promise.completeWith(future: try recovery(error)) } catch { promise.failure(error) }
                }
            }
        }
    }

    /// A future with this future's value if `predicate` accepts it, else failing with
    /// ``FuturesError/noSuchElement``.
    @inlinable
    public func withFilter(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ predicate: @escaping @Sendable (T) throws -> Bool
    ) -> Future<T> {
        map(context: context, cancelToken: cancelToken) { value in
            guard try predicate(value) else { throw FuturesError.noSuchElement }
            return value
        }
    }

    /// Calls `apply` with the value if the future succeeds (same as `onSuccess`).
    @inlinable
    public func forEach(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ apply: @escaping @Sendable (T) -> Void
    ) {
        onSuccess(context: context, cancelToken: cancelToken, apply)
    }

    /// Runs the side effect `effect` with the result, then completes the returned future with
    /// the same result (so effects chained with `andThen` run in order).
    @inlinable
    public func andThen(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ effect: @escaping @Sendable (Result<T, any Error>) -> Void
    ) -> Future<T> {
        derive(context: context, token: cancelToken) { (promise: Promise<T>) in
            { result in
                effect(result)
                promise.complete(result)
            }
        }
    }

    /// A future of both values once both futures succeed; the first failure (in order: this
    /// future, then `other`) fails it.
    ///
    /// It waits for both futures from the start: abandoning it abandons each of them that is
    /// still pending (if nothing else waits for it).
    @inlinable
    public func zip<U: Sendable>(_ other: Future<U>) -> Future<(T, U)> {
        let promise = Promise<(T, U)>()
        // This future's value, and `other`'s result, whichever arrives first.
        let slots = Locked<(first: T?, second: Result<U, any Error>?)>((nil, nil))
        addCallback(for: promise.future, context: .immediate, token: nil) { result in
            switch result {
            case .success(let first):
                let second = slots.withLock { slots -> Result<U, any Error>? in
                    slots.first = first
                    return slots.second
                }
                if let second { promise.complete(second.map { (first, $0) }) }
            case .failure(let error):
                promise.failure(error)
            }
        }
        other.addCallback(for: promise.future, context: .immediate, token: nil) { result in
            let first = slots.withLock { slots -> T? in
                slots.second = result
                return slots.first
            }
            if let first { promise.complete(result.map { (first, $0) }) }
        }
        return promise.future
    }
}
