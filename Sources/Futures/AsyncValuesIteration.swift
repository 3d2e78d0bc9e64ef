// AsyncValuesIteration: what an async iteration over FutureStream.values or .results holds.

// MARK: - AsyncValuesIteration

/// What ``FutureStream/Values`` and ``FutureStream/Results`` (and their iterators) hold: the
/// channel, and the subscription's token, cancelled when the iteration ends (the stream
/// finished or failed, the iterating task was cancelled) or goes away (it was dropped after a
/// `break`), which abandons the stream if that was its last subscription.
@usableFromInline
final class AsyncValuesIteration<Element: Sendable>: Sendable {
    @usableFromInline let channel: AsyncValuesChannel<Element>
    @usableFromInline let token: CancelToken

    @inlinable
    init(channel: AsyncValuesChannel<Element>, token: CancelToken) {
        self.channel = channel
        self.token = token
    }

    deinit {
        channel.close()
        token.cancel()
    }

    // MARK: Iteration

    /// The next element, nil at the end; throws the stream's failure (once) after the elements
    /// buffered before it.
    ///
    /// A buffered element is taken under the channel's lock without a suspension, a
    /// continuation or a cancellation handler; only an empty buffer suspends (see
    /// ``AsyncValuesChannel/waitForPush(isolation:)``), on the caller's isolation. A task
    /// cancelled meanwhile ends the iteration: nil, the buffer discarded, the subscription
    /// cancelled, as it would be if the task were cancelled while suspended.
    @inlinable
    func next(isolation actor: isolated (any Actor)?) async throws -> Element? {
        while true {
            if Task.isCancelled {
                end(closing: true)
                return nil
            }
            switch channel.step() {
            case .element(let element): return element
            case .end:
                end(closing: false)
                return nil
            case .fail(let error):
                end(closing: false)
                throw error
            case .wait: await channel.waitForPush(isolation: actor)
            }
        }
    }

    /// Ends the iteration: cancels the subscription (abandoning the stream if it was its last
    /// one), after discarding what is buffered when `closing`.
    @usableFromInline
    func end(closing: Bool) {
        if closing { channel.close() }
        token.cancel()
    }
}
