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
///
/// The state and the mutex share one allocation (a `ManagedBuffer`: the state is the header, the
/// mutex the single tail element), and `withLock` is inlinable so that generic callers in other
/// modules are specialised instead of looking up generic metadata at run time.
@usableFromInline
struct Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: the state is only read or written between lock and unlock of the
    // mutex stored next to it in `storage`.
    @usableFromInline
    let storage: LockedStorage<State>

    @inlinable
    init(_ initial: State) {
        storage = unsafeDowncast(
            LockedStorage<State>.create(minimumCapacity: 1) { _ in initial },
            to: LockedStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, nil)
            precondition(status == 0, "pthread_mutex_init failed")
        }
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try storage.withUnsafeMutablePointers { state, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }
}

/// The allocation behind a ``Locked``: the state as header, one `pthread_mutex_t` as element.
@usableFromInline
final class LockedStorage<State>: ManagedBuffer<State, pthread_mutex_t> {
    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }
}
