// MARK: - StreamPromise

/// The write side of a ``FutureStream``: pushes results, then optionally finishes it.
///
/// A failure pushed with ``failure(_:)`` is an ordinary element (the stream goes on);
/// ``finish()`` and ``finish(throwing:)`` end the stream for good. Every method returns
/// `false` and does nothing once the stream is finished.
public final class StreamPromise<T: Sendable>: Sendable {
    /// The stream this promise feeds.
    public let stream: FutureStream<T>

    /// Creates a promise whose stream keeps the last `capacity` results for replay
    /// (default ``FutureStream/defaultCapacity``, 100; must be at least 1). When full, the
    /// oldest kept result is dropped.
    public init(capacity: Int = FutureStream<T>.defaultCapacity) {
        stream = FutureStream(capacity: capacity)
    }

    /// Pushes a successful result.
    @inlinable @discardableResult
    public func success(_ value: T) -> Bool {
        stream.push(.item(.success(value)))
    }

    /// Pushes a failed result (the stream continues).
    @inlinable @discardableResult
    public func failure(_ error: any Error) -> Bool {
        stream.push(.item(.failure(error)))
    }

    /// Pushes `result`.
    @inlinable @discardableResult
    public func complete(_ result: Result<T, any Error>) -> Bool {
        stream.push(.item(result))
    }

    /// Pushes the result of `future` once it completes.
    public func completeWith(context: any ExecutionContext = .immediate, future: Future<T>) {
        future.onComplete(context: context) { [self] result in
            self.complete(result)
        }
    }

    /// Pushes every result of `other` (its kept ones first), and finishes when `other` finishes.
    public func completeWith(context: any ExecutionContext = .immediate, stream other: FutureStream<T>) {
        other.subscribe(context: context, token: nil) { [self] event in
            _ = self.stream.push(event)
        }
    }

    /// Ends the stream: subscribers get the results already pushed, then their `onFinish`.
    @discardableResult
    public func finish() -> Bool {
        stream.push(.finished)
    }

    /// Pushes `error` as a last failed result, then ends the stream.
    @discardableResult
    public func finish(throwing error: any Error) -> Bool {
        stream.push(.item(.failure(error)), finishing: true)
    }
}
