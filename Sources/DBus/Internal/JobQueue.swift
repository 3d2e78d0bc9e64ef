// The lock-protected queue through which other threads hand work to a connection's owner thread.
import Glibc

/// A bounded FIFO of closures plus the eventfd that wakes the owner thread.
///
/// `@unchecked Sendable`: `items`, `wakePending` and `closed` are guarded by `mutex`;
/// `eventFD` is immutable after init.
final class JobQueue: @unchecked Sendable {
    typealias Job = @Sendable () -> Void
    static let capacity = 65_536

    let eventFD: Int32
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var items: [Job] = []
    private var wakePending = false
    private var closed = false

    init() {
        eventFD = LibDBus.makeEventFD()
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(notFull, nil)
    }

    deinit {
        pthread_cond_destroy(notFull)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        notFull.deallocate()
        Glibc.close(eventFD)
    }

    /// Appends `job`; waits while the queue is full. Returns false once the queue is closed.
    func submit(_ job: @escaping Job) -> Bool {
        pthread_mutex_lock(mutex)
        while items.count >= JobQueue.capacity && !closed { pthread_cond_wait(notFull, mutex) }
        if closed {
            pthread_mutex_unlock(mutex)
            return false
        }
        items.append(job)
        let mustWake = !wakePending
        wakePending = true
        pthread_mutex_unlock(mutex)
        if mustWake { wake() }
        return true
    }

    /// Writes the eventfd so the owner's poll returns.
    func wake() {
        var one: UInt64 = 1
        _ = write(eventFD, &one, 8)
    }

    /// Drains the eventfd counter (owner thread, after poll reported it readable).
    func drainWakeups() {
        var value: UInt64 = 0
        _ = read(eventFD, &value, 8)
    }

    /// Takes every queued job (owner thread).
    func takeAll() -> [Job] {
        pthread_mutex_lock(mutex)
        let out = items
        items = []
        wakePending = false
        pthread_cond_broadcast(notFull)
        pthread_mutex_unlock(mutex)
        return out
    }

    var isEmpty: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return items.isEmpty
    }

    /// Refuses further jobs and returns those still queued (owner thread, at shutdown).
    func close() -> [Job] {
        pthread_mutex_lock(mutex)
        closed = true
        let out = items
        items = []
        pthread_cond_broadcast(notFull)
        pthread_mutex_unlock(mutex)
        return out
    }
}
