// MARK: - AsyncSequence bridge

extension FutureStream {
    /// The stream's successful values as an `AsyncThrowingStream` (kept values first).
    ///
    /// The sequence ends when the stream finishes, and throws (ending) at the first failed
    /// result. Its buffer holds at most ``subscriberBacklog`` values (`bufferingNewest`), as a
    /// callback subscription's queue does: there is no back-pressure, so a consumer that far
    /// behind the producer loses the OLDEST buffered values; the producer never blocks. Ending
    /// the iteration (or cancelling its task) unsubscribes.
    @inlinable
    public var values: AsyncThrowingStream<T, any Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(subscriberBacklog)) { continuation in
            let token = CancelToken()
            continuation.onTermination = { _ in token.cancel() }
            subscribe(context: .immediate, token: token) { event in
                switch event {
                case .item(.success(let value)): continuation.yield(value)
                case .item(.failure(let error)): continuation.finish(throwing: error)
                case .finished: continuation.finish()
                }
            }
        }
    }
}
