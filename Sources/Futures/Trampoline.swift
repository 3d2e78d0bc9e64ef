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
@usableFromInline
final class Trampoline {
    // Only the owning thread touches these (see above): no dynamic exclusivity checks needed.
    @exclusivity(unchecked)
    private var tasks = RingBuffer<@Sendable () -> Void>(initialCapacity: 16)
    @usableFromInline
    @exclusivity(unchecked)
    var isDraining = false

    /// Runs `task` now, or after the task currently running on this thread returns.
    @usableFromInline
    func run(_ task: @escaping @Sendable () -> Void) {
        if isDraining {
            tasks.append(task)
            return
        }
        isDraining = true
        task()
        drainQueued()
    }

    /// Runs `body(argument)` now, or after the task currently running on this thread returns.
    /// The same as `run { body(argument) }`, but the closure (a heap allocation) is only
    /// created when the call has to be queued.
    @inlinable
    func run<A>(_ body: @escaping @Sendable (A) -> Void, with argument: A) where A: Sendable {
        if isDraining {
            enqueue { body(argument) }
            return
        }
        isDraining = true
        body(argument)
        drainQueued()
    }

    /// Queues `task` behind the running one. Only valid while draining.
    @usableFromInline
    func enqueue(_ task: @escaping @Sendable () -> Void) {
        tasks.append(task)
    }

    /// Runs queued tasks (including the ones they queue) until none is left, then ends the drain.
    @usableFromInline
    func drainQueued() {
        while !tasks.isEmpty, let next = tasks.popFirst() { next() }
        isDraining = false
    }

    // MARK: Iterative release

    @exclusivity(unchecked)
    private var releasing: [Any] = []
    @exclusivity(unchecked)
    private var isReleasing = false

    /// Drops `object` (setting it to nil) and whatever only it keeps alive, in a loop instead
    /// of recursively: objects handed over while a release is under way on this thread are
    /// dropped after it returns. Future teardown uses it so that releasing a never-completed chain of any
    /// length uses constant stack.
    @usableFromInline
    func release(_ object: inout Any?) {
        // Taken out of the caller's variable so that no reference outlives this call.
        guard object != nil else { return }
        releasing.append(object.take()!)
        guard !isReleasing else { return }
        isReleasing = true
        while let next = releasing.popLast() { _ = consume next }
        isReleasing = false
    }

    /// The calling thread's trampoline.
    @usableFromInline
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
