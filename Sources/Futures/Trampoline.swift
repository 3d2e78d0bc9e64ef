#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Trampoline

/// A per-thread queue that turns nested immediate executions into a loop.
///
/// When a callback running on `ImmediateContext` completes another promise whose callbacks also
/// use `ImmediateContext`, those callbacks are appended here instead of being called
/// recursively; the outermost `execute` drains the queue. A chain of any length therefore runs
/// in constant stack depth. Only the owning thread touches an instance (thread-local storage).
final class Trampoline {
    private var tasks = RingBuffer<@Sendable () -> Void>(initialCapacity: 16)
    private var isDraining = false

    /// Runs `task` now, or after the task currently running on this thread returns.
    func run(_ task: @escaping @Sendable () -> Void) {
        if isDraining {
            tasks.append(task)
            return
        }
        isDraining = true
        task()
        while let next = tasks.popFirst() { next() }
        isDraining = false
    }

    /// The calling thread's trampoline.
    static var current: Trampoline {
        let key = trampolineKey
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Trampoline>.fromOpaque(raw).takeUnretainedValue()
        }
        let trampoline = Trampoline()
        pthread_setspecific(key, Unmanaged.passRetained(trampoline).toOpaque())
        return trampoline
    }
}

/// The thread-local slot holding each thread's `Trampoline`; released when the thread exits.
private let trampolineKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { raw in
        #if canImport(Darwin)
        Unmanaged<Trampoline>.fromOpaque(raw).release()
        #else
        if let raw { Unmanaged<Trampoline>.fromOpaque(raw).release() }
        #endif
    }
    precondition(status == 0, "pthread_key_create failed: \(status)")
    return key
}()
