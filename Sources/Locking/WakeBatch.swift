// WakeBatch: wake-ups of suspended tasks deferred to the end of a thread's batch of work.

// MARK: - WakeBatch

/// Defers the resumption of suspended tasks to the end of the calling thread's current batch.
///
/// A thread that handles a backlog of events in one go (the D-Bus owner thread draining the
/// messages libdbus has read) opens a batch with ``run(_:)``. A producer that would resume a
/// waiting consumer task for each event calls ``resume(_:)`` instead: inside a batch the
/// resumption happens once the batch ends, so the consumer wakes once and finds every event of
/// the batch buffered, rather than being woken (a thread switch) for each one. Outside a batch
/// ``resume(_:)`` resumes at once.
///
/// Only the continuation's resumption moves; nothing is dropped or reordered, and the delay is
/// bounded by the batch (the owner thread's drain is at most 256 messages). A batch must not
/// wait for the tasks it defers (the thread never blocks on its consumers).
@usableFromInline
package enum WakeBatch {
    /// Runs `body` as a batch: continuations passed to ``resume(_:)`` on this thread while it
    /// runs are resumed when it returns, in the order they were passed. Nested calls join the
    /// outer batch.
    @inlinable
    package static func run<R>(_ body: () throws -> R) rethrows -> R {
        let batch = WakeBatchState.current
        if batch.isOpen { return try body() }
        batch.isOpen = true
        defer { batch.close() }
        return try body()
    }

    /// Resumes `continuation` at the end of this thread's batch, or now if none is open.
    @inlinable
    package static func resume(_ continuation: UnsafeContinuation<Void, Never>) {
        let batch = WakeBatchState.current
        if batch.isOpen {
            batch.pending.append(continuation)
        } else {
            continuation.resume()
        }
    }
}
