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

    /// Whether the stream was abandoned (see ``onAbandoned(_:)``).
    public var isAbandoned: Bool { stream.isAbandoned }

    /// Calls `handler` once when the stream is abandoned: it is not finished, it had at least
    /// one subscription, and every subscription has since been cancelled (a cancel token, a
    /// `first()` or `take(n)` that got its results, an async iteration that ended, a derived
    /// stream or future abandoned in turn). Subscriptions made without a token are never
    /// cancelled, so they keep the stream from being abandoned. Runs at once if the stream
    /// already is abandoned; never runs if the stream finishes first (the handler is then
    /// released). `handler` runs on the thread that cancelled the last subscription, after the
    /// code running there on ``ImmediateContext`` returns, with no lock held.
    ///
    /// Use it to stop producing (a scan, a notification subscription nobody listens to); the
    /// handler may ``finish()`` the stream.
    public func onAbandoned(_ handler: @escaping @Sendable () -> Void) {
        stream.onAbandoned(handler)
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

    /// Pushes the result of `future` once it completes. If this stream is abandoned first, its
    /// callback on `future` is removed (which may abandon `future` in turn).
    public func completeWith(context: any ExecutionContext = .immediate, future: Future<T>) {
        let route = future.addRemovableCallback(context: context, token: nil) { [self] result in
            self.complete(result)
        }
        if let route { onAbandoned { [weak future] in future?.dropInterest(route) } }
    }

    /// Pushes every result of `other` (its kept ones first), and finishes when `other` finishes.
    /// If this stream is abandoned, its subscription to `other` ends (which may abandon `other`).
    public func completeWith(context: any ExecutionContext = .immediate, stream other: FutureStream<T>) {
        let id = other.subscribe(context: context, token: nil) { [self] event in
            _ = self.stream.push(event)
        }
        other.link(stream, to: id)
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
