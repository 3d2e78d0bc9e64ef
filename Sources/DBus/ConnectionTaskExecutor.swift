// ConnectionTaskExecutor: a TaskExecutor that runs tasks on a connection's owner thread.

// MARK: - ConnectionTaskExecutor

/// Runs the jobs of tasks that prefer it (`withTaskExecutorPreference`, `Task(executorPreference:)`)
/// on the connection's owner thread, in order with its other work.
///
/// A task awaiting a reply or a signal's value normally resumes on the global concurrent
/// executor: the reply lands on the owner thread, which wakes a pool thread to go on, and what
/// the task calls next is handed back to the owner thread (a second wake-up). A task that
/// prefers this executor goes on on the owner thread itself: a resumption there queues the job
/// without a wake-up, and a call the task makes is sent at once. Its code then runs where the
/// connection's callbacks run and follows their rule: it must not block (a blocking call made
/// there throws; a semaphore wait would stall every reply and signal of the connection).
///
/// Once the connection is closed, jobs go to the global concurrent executor instead, so a task
/// still running then is never stranded.
public final class ConnectionTaskExecutor: TaskExecutor {
    let core: ConnectionCore

    init(core: ConnectionCore) {
        self.core = core
    }

    /// Queues `job` on the owner thread (never runs it inline), or on the global concurrent
    /// executor once the connection is closed.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        if !core.enqueue({ job.runSynchronously(on: executor) }) {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }
}
