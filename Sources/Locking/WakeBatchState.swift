// WakeBatchState: one thread's WakeBatch (thread-local storage).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
