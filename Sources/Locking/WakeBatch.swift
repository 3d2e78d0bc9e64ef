// WakeBatch: wake-ups of suspended tasks deferred to the end of a thread's batch of work.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

// MARK: - WakeBatchState

/// One thread's batch (thread-local storage: only its thread touches it).
@usableFromInline
package final class WakeBatchState {
    // Only the owning thread touches these (see above): no dynamic exclusivity checks needed.
    @usableFromInline @exclusivity(unchecked)
    package var isOpen = false
    @usableFromInline @exclusivity(unchecked)
    package var pending: [UnsafeContinuation<Void, Never>] = []

    /// Ends the batch: resumes the deferred continuations (those deferred while resuming too).
    @usableFromInline
    package func close() {
        var index = 0
        while index < pending.count {
            pending[index].resume()
            index += 1
        }
        pending.removeAll(keepingCapacity: true)
        isOpen = false
    }

    /// The calling thread's batch state.
    @usableFromInline
    package static var current: WakeBatchState {
        let key = wakeBatchKey
        if let raw = pthread_getspecific(key) {
            return Unmanaged<WakeBatchState>.fromOpaque(raw).takeUnretainedValue()
        }
        let state = WakeBatchState()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }
}

/// The thread-local slot holding each thread's `WakeBatchState`; released when the thread exits.
private let wakeBatchKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { raw in
        #if canImport(Darwin)
        Unmanaged<WakeBatchState>.fromOpaque(raw).release()
        #else
        if let raw { Unmanaged<WakeBatchState>.fromOpaque(raw).release() }
        #endif
    }
    precondition(status == 0, "pthread_key_create failed: \(status)")
    return key
}()
