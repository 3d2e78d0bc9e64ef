// Under `make tsan` (-DBLUECAP_TSAN) `Mutex` in these tests is a pthread mutex that
// ThreadSanitizer sees (Synchronization.Mutex is futex-based on Linux and invisible to it).
#if BLUECAP_TSAN
import Glibc

final class Mutex<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched between lock and unlock of `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ initialValue: Value) {
        value = initialValue
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
#endif
