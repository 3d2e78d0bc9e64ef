// MARK: - AsyncSequence bridge

extension FutureStream {
    /// The stream's successful values as an `AsyncSequence` (kept values first): a
    /// ``Values`` sequence.
    ///
    /// The sequence ends when the stream finishes, and **throws (ending) at the first failed
    /// result**, even though the stream itself goes on after a failure. Use it where a failure
    /// means "stop" (a scan, a one-shot sequence of reads); where failures are ordinary
    /// elements (a connection stream in which `.disconnect` is one failed element followed by
    /// more events), iterate ``results`` instead.
    ///
    /// Its buffer holds at most ``subscriberBacklog`` values (`bufferingNewest`), as a callback
    /// subscription's queue does: there is no back-pressure, so a consumer that far behind the
    /// producer loses the OLDEST buffered values; the producer never blocks. Ending the
    /// iteration (breaking out, throwing, or cancelling its task) cancels the subscription,
    /// which abandons the stream if it was its last one (see ``StreamPromise/onAbandoned(_:)``).
    ///
    /// A consumer that falls behind takes every value buffered meanwhile without suspending
    /// (one lock round trip each); it suspends, and a push wakes it, only when nothing is
    /// buffered. Reading the property subscribes: values the stream delivers from then on are
    /// buffered for the iteration.
    @inlinable
    public var values: Values {
        let channel = AsyncValuesChannel<T>(limit: subscriberBacklog)
        let token = CancelToken()
        subscribe(context: .immediate, token: token) { event in
            switch event {
            case .item(.success(let value)): channel.push(value)
            case .item(.failure(let error)):
                channel.finish(throwing: error)
                token.cancel()
            case .finished: channel.finish()
            }
        }
        return Values(iteration: AsyncValuesIteration(channel: channel, token: token))
    }

    /// Every result of the stream, successes and failures alike, as an `AsyncSequence` (kept
    /// results first): a ``Results`` sequence.
    ///
    /// Unlike ``values``, a failed result does not end the sequence: it ends only when the
    /// stream finishes, or when the iteration ends (breaking out or cancelling its task). Use it
    /// for streams whose failures are ordinary elements, such as a connection stream where a
    /// `.disconnect` is one failed element and reconnections follow; use ``values`` where the
    /// first failure should stop the loop.
    ///
    /// Buffering is that of ``values``: at most ``subscriberBacklog`` results
    /// (`bufferingNewest`), a consumer that far behind loses the OLDEST buffered ones, the
    /// producer never blocks. Ending the iteration cancels the subscription, which abandons the
    /// stream if it was its last one (see ``StreamPromise/onAbandoned(_:)``).
    @inlinable
    public var results: Results {
        let channel = AsyncValuesChannel<Result<T, any Error>>(limit: subscriberBacklog)
        let token = CancelToken()
        subscribe(context: .immediate, token: token) { event in
            switch event {
            case .item(let result): channel.push(result)
            case .finished: channel.finish()
            }
        }
        return Results(iteration: AsyncValuesIteration(channel: channel, token: token))
    }
}
