// LockCondition: a condition variable for threads waiting inside a `Locked`.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - LockCondition

/// A `pthread_cond_t` used with ``Locked/withLock(waitingOn:until:_:)``: a thread waits inside
/// the lock until another changes the state and calls ``broadcast()``. Only for blocking
/// producers (the D-Bus job queue when it is full); never wait on a thread that runs callbacks.
@usableFromInline
package final class LockCondition: @unchecked Sendable {
    // @unchecked Sendable: pthread condition variables are meant to be shared between threads;
    // `condition` is never reassigned.
    @usableFromInline
    let condition: UnsafeMutablePointer<pthread_cond_t>

    /// A condition nobody waits on yet.
    package init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let status = pthread_cond_init(condition, nil)
        precondition(status == 0, "pthread_cond_init failed: \(status)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Wakes every thread waiting on the condition (they recheck their predicate).
    package func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Waits on the condition; `mutex` is held by the caller and released while waiting.
    @usableFromInline
    func wait(on mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_cond_wait(condition, mutex)
    }
}
