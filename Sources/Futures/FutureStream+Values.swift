// FutureStream.Values: the AsyncSequence of a stream's successful values.

// MARK: - FutureStream.Values

extension FutureStream {
    /// The stream's successful values as an `AsyncSequence`: what ``FutureStream/values``
    /// returns.
    ///
    /// It ends when the stream finishes and throws (ending) at the stream's first failure. It
    /// holds at most ``FutureStream/subscriberBacklog`` values; beyond that the OLDEST buffered
    /// value is dropped (as `AsyncThrowingStream`'s `bufferingNewest`), and the producer never
    /// blocks. A buffered value is taken without suspending; `next()` suspends only when
    /// nothing is buffered. Ending the iteration (the end of the stream, a failure, a cancelled
    /// task, or the sequence and its iterator dropped after a `break`) cancels the
    /// subscription, which abandons the stream if it was its last one (see
    /// ``StreamPromise/onAbandoned(_:)``).
    ///
    /// The sequence subscribed when ``FutureStream/values`` was read: its iterators share that
    /// one subscription, and only one task may iterate it at a time.
    public struct Values: AsyncSequence, Sendable {
        /// A successful value of the stream.
        public typealias Element = T
        /// What iterating throws: the stream's first failure.
        public typealias Failure = any Error

        @usableFromInline let iteration: AsyncValuesIteration<T>

        @inlinable
        init(iteration: AsyncValuesIteration<T>) {
            self.iteration = iteration
        }

        /// An iterator over the values (shares the sequence's subscription).
        @inlinable
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(iteration: iteration)
        }

        // MARK: AsyncIterator

        /// Takes the values out of the sequence's buffer, in order.
        public struct AsyncIterator: AsyncIteratorProtocol {
            @usableFromInline let iteration: AsyncValuesIteration<T>

            @inlinable
            init(iteration: AsyncValuesIteration<T>) {
                self.iteration = iteration
            }

            /// The next value, or nil once the stream finished (or the task was cancelled);
            /// throws the stream's first failure, once, after the values that came before it.
            @inlinable
            public mutating func next() async throws -> T? {
                try await iteration.next(isolation: nil)
            }

            /// The next value, waiting on `actor`'s isolation (the caller's: `for try await`
            /// passes it), so the iteration does not leave the caller's executor.
            @inlinable
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> T? {
                try await iteration.next(isolation: actor)
            }
        }
    }
}
