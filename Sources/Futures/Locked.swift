#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Locked

/// A value protected by a `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex`, whose futex-based Linux implementation is invisible to
/// ThreadSanitizer (reported as races) and slower on the uncontended path we care about.
/// `withLock` must not call user code: the callers in this module only move data in and out.
final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read or written between lock and unlock of `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
