// PthreadMutex: Synchronization.Mutex's API over a pthread mutex, which ThreadSanitizer sees.
import Glibc

// MARK: - PthreadMutex

/// A value protected by a `pthread_mutex_t`, with the same `init(_:)` / `withLock(_:)` API as
/// `Synchronization.Mutex`.
///
/// `Mutex` is futex-based on Linux, and ThreadSanitizer does not see futex locking: every access
/// it protects is reported as a race. Under `make tsan` (`-DBLUECAP_TSAN`) each module that uses
/// `Mutex` resolves the name to this type instead (see the `TSanMutex.swift` files), so the
/// sanitizer checks the real locking. Never call user code inside `withLock`.
public final class PthreadMutex<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched between lock and unlock of `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A mutex holding `initialValue`.
    public init(_ initialValue: Value) {
        value = initialValue
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

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
