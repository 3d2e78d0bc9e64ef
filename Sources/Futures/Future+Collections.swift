import Locking

// MARK: - Collections of futures
//
// Each combinator waits for every future of the sequence from the start (a callback on each,
// registered through `Future.addCallback(for:context:token:_:)`): abandoning the future it
// returns abandons every element still pending that nothing else waits for.

extension Sequence {
    /// Combines the values of a sequence of futures, in sequence order, starting from `initial`.
    /// Fails with the first failure (in sequence order) or the first error `combine` throws.
    ///
    /// `combine` runs on `context`, once per value, in sequence order, one call at a time; a
    /// value that arrives early waits for the ones before it. Abandoning the returned future
    /// abandons every element still pending (if nothing else waits for it).
    public func fold<T: Sendable, R: Sendable>(
        context: any ExecutionContext = .futuresDefault,
        initial: R,
        _ combine: @escaping @Sendable (R, T) throws -> R
    ) -> Future<R> where Element == Future<T> {
        let futures = Array(self)
        guard !futures.isEmpty else { return Future(value: initial) }
        let promise = Promise<R>()
        let folding = Folding(count: futures.count, initial: initial, combine: combine, promise: promise)
        for (index, future) in futures.enumerated() {
            future.addCallback(for: promise.future, context: context, token: nil) { result in
                folding.arrive(result, at: index)
            }
        }
        return promise.future
    }

    /// A future of every value, in sequence order; fails as soon as any future fails.
    ///
    /// Abandoning it abandons every element still pending (if nothing else waits for it).
    public func sequence<T: Sendable>(
        context: any ExecutionContext = .futuresDefault
    ) -> Future<[T]> where Element == Future<T> {
        let futures = Array(self)
        let promise = Promise<[T]>()
        guard !futures.isEmpty else {
            promise.success([])
            return promise.future
        }
        let collector = Collector<T>(count: futures.count)
        for (index, future) in futures.enumerated() {
            future.addCallback(for: promise.future, context: context, token: nil) { result in
                switch result {
                case .success(let value):
                    if let all = collector.store(value, at: index) { promise.success(all) }
                case .failure(let error):
                    promise.failure(error)
                }
            }
        }
        return promise.future
    }

    /// Maps each element to a future with `mapping` (called now, in order), then behaves as
    /// ``Swift/Sequence/sequence(context:)`` on the results: abandoning the returned future
    /// abandons every future `mapping` returned that is still pending.
    public func traverse<T: Sendable>(
        context: any ExecutionContext = .futuresDefault,
        _ mapping: (Element) throws -> Future<T>
    ) rethrows -> Future<[T]> {
        try map(mapping).sequence(context: context)
    }
}

// MARK: - Bookkeeping

/// Gathers the values of `sequence(context:)`; completes when the last slot is filled.
private final class Collector<T: Sendable>: Sendable {
    // Sendable through this lock: the slots and the count of missing values.
    private let state: Locked<(values: [T?], missing: Int)>

    init(count: Int) {
        state = Locked((Array(repeating: nil, count: count), count))
    }

    /// Stores `value`; returns every value once the last one arrives.
    func store(_ value: T, at index: Int) -> [T]? {
        state.withLock { state in
            state.values[index] = value
            state.missing -= 1
            return state.missing == 0 ? state.values.map { $0! } : nil
        }
    }
}

/// Runs `fold(context:initial:_:)`: keeps the results that arrive ahead of their turn and
/// combines them in sequence order, one thread at a time, outside the lock.
private final class Folding<T: Sendable, R: Sendable>: Sendable {
    private struct State {
        /// Results that arrived and were not combined yet, by index.
        var arrived: [Result<T, any Error>?]
        /// The index of the next result to combine.
        var next = 0
        var accumulated: R
        /// Set while a thread combines; stays set once the fold has completed.
        var isCombining = false

        /// The next result and the accumulator to combine it with, if it has arrived and no
        /// other thread combines (this thread then does).
        mutating func takeNext() -> (Result<T, any Error>, R)? {
            guard !isCombining, next < arrived.count, let result = arrived[next] else { return nil }
            arrived[next] = nil
            next += 1
            isCombining = true
            return (result, accumulated)
        }
    }

    // Sendable through this lock: the arrived results, the accumulator and the combining flag.
    private let state: Locked<State>
    private let combine: @Sendable (R, T) throws -> R
    private let promise: Promise<R>

    init(count: Int, initial: R, combine: @escaping @Sendable (R, T) throws -> R, promise: Promise<R>) {
        state = Locked(State(arrived: Array(repeating: nil, count: count), accumulated: initial))
        self.combine = combine
        self.promise = promise
    }

    /// Records the result of element `index`, then combines every result whose turn has come.
    func arrive(_ result: Result<T, any Error>, at index: Int) {
        var step = state.withLock { state -> (Result<T, any Error>, R)? in
            state.arrived[index] = result
            return state.takeNext()
        }
        while let (result, accumulated) = step {
            let combined = result.flatMap { value in Result { try combine(accumulated, value) } }
            guard case .success(let value) = combined else {
                promise.complete(combined)  // `isCombining` stays set: nothing more is combined
                return
            }
            let isLast = state.withLock { state -> Bool in
                state.accumulated = value
                guard state.next < state.arrived.count else { return true }
                state.isCombining = false
                step = state.takeNext()
                return false
            }
            if isLast {
                promise.success(value)
                return
            }
        }
    }
}
