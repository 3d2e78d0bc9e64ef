import Locking

// MARK: - AsyncValuesChannel

/// The buffer between a stream subscription and an async iteration over ``FutureStream/values``
/// or ``FutureStream/results`` (``FutureStream/Values``, ``FutureStream/Results``).
///
/// The subscription pushes each element under one lock; the iteration takes them out one at a
/// time under the same lock, and suspends only when nothing is buffered. A push wakes a
/// suspended iteration once: everything pushed before the iteration runs again is taken without
/// a further suspension or task hop, so a consumer that falls behind drains its backlog at the
/// cost of a lock round trip per element (no continuation, no cancellation handler: those
/// are set up only to wait on an empty buffer). The wake-up waits for
/// the end of the pushing thread's ``WakeBatch`` (the D-Bus owner thread's drain of the messages
/// it has read), so a backlog wakes the iteration once per batch, not once per element.
///
/// Holds at most `limit` elements: a push beyond it drops the OLDEST buffered element, as
/// `bufferingNewest(limit)` does; the producer never blocks.
@usableFromInline
final class AsyncValuesChannel<Element: Sendable>: Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var items = RingBuffer<Element>()
        /// Set when the stream finished (nil failure) or the iteration must throw `failure`.
        @usableFromInline var isFinished = false
        @usableFromInline var failure: (any Error)?
        /// Set when the iteration ended (cancelled or dropped): nothing more is buffered.
        @usableFromInline var isClosed = false
        @usableFromInline var waiter: UnsafeContinuation<Void, Never>?
        @usableFromInline init() {}
    }

    /// What the iteration does next.
    @usableFromInline
    enum Step {
        case element(Element)
        case end
        case fail(any Error)
        case wait
    }

    // Sendable through this lock: the buffer, the end state and the waiting iteration live in it.
    @usableFromInline let state = Locked(State())
    @usableFromInline let limit: Int

    @inlinable
    init(limit: Int) {
        self.limit = limit
    }

    // MARK: Producer

    /// Buffers `element` (dropping the oldest beyond `limit`) and wakes a waiting iteration.
    @inlinable
    func push(_ element: Element) {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard !state.isFinished, !state.isClosed else { return nil }
            state.items.append(element, droppingOldestBeyond: limit)
            return state.waiter.take()
        }
        // At the end of the pushing thread's batch, if it runs one: the iteration then wakes
        // once for every element pushed in the batch.
        if let waiter { WakeBatch.resume(waiter) }
    }

    /// Ends the iteration after the buffered elements: with `failure` thrown, or normally.
    @inlinable
    func finish(throwing failure: (any Error)? = nil) {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard !state.isFinished, !state.isClosed else { return nil }
            state.isFinished = true
            state.failure = failure
            return state.waiter.take()
        }
        if let waiter { WakeBatch.resume(waiter) }
    }

    /// Ends the iteration now (its task was cancelled, or it was dropped): buffered elements are
    /// discarded and a suspended `next()` returns nil.
    @inlinable
    func close() {
        let (waiter, dropped) = state.withLock { state -> (UnsafeContinuation<Void, Never>?, [Element]) in
            state.isClosed = true
            return (state.waiter.take(), state.items.removeAll())
        }
        _ = dropped  // released after the lock
        waiter?.resume()
    }

    // MARK: Consumer

    /// What the iteration does next: take a buffered element, end, throw the stream's failure
    /// (once, after the elements buffered before it), or wait for a push. One lock round trip.
    @inlinable
    func step() -> Step {
        state.withLock { state -> Step in
            if let element = state.items.popFirst() { return .element(element) }
            if state.isClosed { return .end }
            if state.isFinished {
                guard let failure = state.failure else { return .end }
                state.failure = nil
                return .fail(failure)
            }
            return .wait
        }
    }

    /// Suspends until a push, the end, or the task's cancellation (which closes the channel),
    /// on `actor`'s isolation (the iterating caller's: no hop off its executor to wait).
    @usableFromInline
    func waitForPush(isolation actor: isolated (any Actor)?) async {
        await withTaskCancellationHandler(operation: {
            await withUnsafeContinuation(isolation: actor) { (continuation: UnsafeContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.items.isEmpty || state.isFinished || state.isClosed { return true }
                    precondition(state.waiter == nil, "FutureStream values iterated by two tasks at once")
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }, onCancel: {
            close()
        }, isolation: actor)
    }
}
