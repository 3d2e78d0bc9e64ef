import Locking

// MARK: - Collections of futures

extension Sequence {
    /// Combines the values of a sequence of futures, in sequence order, starting from `initial`.
    /// Fails with the first failure (in sequence order) or the first error `combine` throws.
    public func fold<T: Sendable, R: Sendable>(
        context: any ExecutionContext = .futuresDefault,
        initial: R,
        _ combine: @escaping @Sendable (R, T) throws -> R
    ) -> Future<R> where Element == Future<T> {
        reduce(Future<R>(value: initial)) { accumulated, next in
            accumulated.flatMap(context: .immediate) { partial in
                next.map(context: context) { value in try combine(partial, value) }
            }
        }
    }

    /// A future of every value, in sequence order; fails as soon as any future fails.
    ///
    /// It waits for every future from the start: abandoning it abandons every element still
    /// pending (if nothing else waits for it).
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
