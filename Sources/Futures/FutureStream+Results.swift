// FutureStream.Results: the AsyncSequence of every result of a stream.

// MARK: - FutureStream.Results

extension FutureStream {
    /// Every result of the stream, successes and failures alike, as an `AsyncSequence`: what
    /// ``FutureStream/results`` returns.
    ///
    /// A failed result is an element; the sequence ends only when the stream finishes or the
    /// iteration ends (a cancelled task, or the sequence and its iterator dropped after a
    /// `break`). It holds at most ``FutureStream/subscriberBacklog`` results; beyond that the
    /// OLDEST buffered result is dropped (as `AsyncStream`'s `bufferingNewest`), and the
    /// producer never blocks. A buffered result is taken without suspending; `next()` suspends
    /// only when nothing is buffered. Ending the iteration cancels the subscription, which
    /// abandons the stream if it was its last one (see ``StreamPromise/onAbandoned(_:)``).
    ///
    /// The sequence subscribed when ``FutureStream/results`` was read: its iterators share that
    /// one subscription, and only one task may iterate it at a time.
    public struct Results: AsyncSequence, Sendable {
        /// A result of the stream.
        public typealias Element = Result<T, any Error>
        /// Iterating never throws.
        public typealias Failure = Never

        @usableFromInline let iteration: AsyncValuesIteration<Result<T, any Error>>

        @inlinable
        init(iteration: AsyncValuesIteration<Result<T, any Error>>) {
            self.iteration = iteration
        }

        /// An iterator over the results (shares the sequence's subscription).
        @inlinable
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(iteration: iteration)
        }

        // MARK: AsyncIterator

        /// Takes the results out of the sequence's buffer, in order.
        public struct AsyncIterator: AsyncIteratorProtocol {
            @usableFromInline let iteration: AsyncValuesIteration<Result<T, any Error>>

            @inlinable
            init(iteration: AsyncValuesIteration<Result<T, any Error>>) {
                self.iteration = iteration
            }

            /// The next result, or nil once the stream finished (or the task was cancelled).
            @inlinable
            public mutating func next() async -> Result<T, any Error>? {
                await next(isolation: nil)
            }

            /// The next result, waiting on `actor`'s isolation (the caller's: `for await`
            /// passes it), so the iteration does not leave the caller's executor.
            @inlinable
            public mutating func next(isolation actor: isolated (any Actor)?) async -> Result<T, any Error>? {
                // The channel throws only a failure given to `finish(throwing:)`, which the
                // subscription behind `results` never gives.
                do { return try await iteration.next(isolation: actor) } catch { return nil }
            }
        }
    }
}
