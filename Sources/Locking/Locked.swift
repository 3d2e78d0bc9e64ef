// Locked: the package's one lock, a value protected by a pthread mutex.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Locked

/// A value protected by a `pthread_mutex_t`: the one lock every module of the package uses.
///
/// A pthread mutex rather than `Synchronization.Mutex`, because ThreadSanitizer sees pthread
/// locking and does not see the futex-based `Mutex` (every access it protects is reported as a
/// race), so what `make tsan` checks is exactly what ships, with no build flag swapping types.
/// Uncontended, a lock/unlock pair costs a few nanoseconds more than `Mutex` (about 19 ns
/// against 14 ns in a tight loop on the CI machine), far below any D-Bus round trip.
///
/// `withLock` must not call user code: callers only move data in and out of the state.
///
/// The state and the mutex share one allocation (a `ManagedBuffer`: the state is the header, the
/// mutex the single tail element), and `withLock` is inlinable so that generic callers in other
/// modules are specialised instead of looking up generic metadata at run time. A `Locked` is a
/// reference: copies share the state and the mutex.
@usableFromInline
package struct Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: the state is only read or written between lock and unlock of the
    // mutex stored next to it in `storage`.
    @usableFromInline
    let storage: LockedStorage<State>

    /// A lock holding `initial`.
    @inlinable
    package init(_ initial: State) {
        storage = unsafeDowncast(
            LockedStorage<State>.create(minimumCapacity: 1) { _ in initial },
            to: LockedStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, nil)
            precondition(status == 0, "pthread_mutex_init failed: \(status)")
        }
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    package func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        try storage.withUnsafeMutablePointers { (state, mutex) throws(E) -> R in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }
}

// MARK: - Waiting

extension Locked {
    /// Takes the lock, waits on `condition` (releasing the lock while waiting) until
    /// `isReady(state)` holds, then runs `body` with the lock held. Whoever makes `isReady` true
    /// must call ``LockCondition/broadcast()`` afterwards.
    @inlinable
    package func withLock<R>(waitingOn condition: LockCondition, until isReady: (State) -> Bool,
                             _ body: (inout State) -> R) -> R {
        storage.withUnsafeMutablePointers { state, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            while !isReady(state.pointee) { condition.wait(on: mutex) }
            return body(&state.pointee)
        }
    }
}

// MARK: - LockedStorage

/// The allocation behind a ``Locked``: the state as header, one `pthread_mutex_t` as element.
@usableFromInline
package final class LockedStorage<State>: ManagedBuffer<State, pthread_mutex_t> {
    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }
}
