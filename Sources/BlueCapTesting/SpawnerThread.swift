// SpawnerThread: the one thread that forks children, so their parent-death signal means "the
// process died".
import Foundation

/// A thread that lives as long as the process and runs every fork on behalf of ``CleanSpawn``.
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, not the process.
/// Test runners and Dispatch retire worker threads at will, so a child forked on one of them
/// could be killed while its owner still runs. Forking on this thread, which never returns,
/// ties the signal to the process: it fires on exit, crash or SIGKILL, never earlier.
final class SpawnerThread: @unchecked Sendable {
    // @unchecked Sendable: `jobs` is only touched while holding `condition` (an NSCondition).
    static let shared = SpawnerThread()

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []

    private init() {
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = "bluecap-spawner"
        thread.start()
    }

    /// Runs `body` on the spawner thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Box<T>()
        condition.lock()
        jobs.append {
            result.value = body()
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return result.value!
    }

    // MARK: - The thread

    private func serve() -> Never {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// A result handed from the spawner thread to the waiting caller.
    private final class Box<T>: @unchecked Sendable {
        // @unchecked Sendable: written once on the spawner thread before `done.signal()`, read
        // by the caller after `done.wait()`; the semaphore orders the two.
        var value: T?
    }
}
