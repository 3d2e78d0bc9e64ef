// BluetoothSession+TaskExecutor: async code that runs where the session's results land.

import DBus

// MARK: - Task executor

extension BluetoothSession {
    /// A `TaskExecutor` that runs the tasks preferring it on the session's D-Bus thread, where
    /// replies and notifications arrive (the thread that runs callbacks given `.immediate`).
    ///
    /// Async code on the default executor pays a thread hop each way per operation: a read
    /// awaited with `try await characteristic.read().value` is sent by the session's thread
    /// (woken for it), and its reply resumes the task on a pool thread (woken too). Inside
    /// `withTaskExecutorPreference(session.taskExecutor) { … }` (or in a
    /// `Task(executorPreference: session.taskExecutor)`) the task goes on on the session's
    /// thread: a read is sent at once and its reply resumes the task there, and a
    /// `for try await` over ``Characteristic/receiveNotificationUpdates(capacity:)``'s `values`
    /// takes each batch of notifications without a thread switch, on both paths (the
    /// `PropertiesChanged` signals of StartNotify, and the `AcquireNotify` socket, which the
    /// session's thread reads in the same `poll` as the bus):
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(session.taskExecutor) {
    ///     for _ in 0..<1000 { samples.append(try await characteristic.read().value.value) }
    /// }
    /// ```
    ///
    /// The code runs where the session's callbacks run and must not block there: a semaphore
    /// wait or a long computation stalls every reply and signal of the session (await instead,
    /// and move heavy work to another task). A session without a bus connection, and one that
    /// was closed, run the tasks on the global concurrent executor.
    public var taskExecutor: any TaskExecutor {
        connection?.taskExecutor ?? globalConcurrentExecutor
    }
}
