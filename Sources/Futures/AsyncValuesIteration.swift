// AsyncValuesIteration: what an async iteration over FutureStream.values or .results holds.

// MARK: - AsyncValuesIteration

/// What an async iteration's `unfolding` closure holds: the channel, and the subscription's
/// token, cancelled when the iteration goes away (it ended, broke out, or its task was
/// cancelled), which abandons the stream if that was its last subscription.
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
}
