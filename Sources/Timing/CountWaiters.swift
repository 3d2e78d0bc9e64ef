// CountWaiters: tasks suspended until a count reaches what each waits for; cancellation ends a wait.
import Locking

// MARK: - CountWaiters

/// Tasks waiting until a count kept elsewhere (a clock's pending timers, a simulator's held
/// calls) reaches the number each asked for. A task cancelled while it waits stops waiting at
/// once: a test whose time limit passes ends instead of hanging on a count that never comes.
///
/// The owner of the count calls ``reached(_:)`` after each change, outside its own lock.
package final class CountWaiters: Sendable {
    private struct Waiter {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var nextID = 0
        var waiters: [Waiter] = []
    }

    // Sendable through this lock: every waiter lives inside it.
    private let state = Locked(State())

    package init() {}

    /// Suspends until the count is at least `count` (`current` reads it: at once if it is), or
    /// until the task is cancelled.
    package func wait(for count: Int, current: @Sendable () -> Int) async {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                // Listed first, then the count read: a change between the two is either seen
                // here or resumes the listed waiter in reached(_:), and only one resumes it.
                let listed = state.withLock { s -> Bool in
                    guard !Task.isCancelled else { return false }
                    s.waiters.append(Waiter(id: id, count: count, continuation: c))
                    return true
                }
                guard listed else { return c.resume() }
                if current() >= count { take(id)?.resume() }
            }
        } onCancel: {
            take(id)?.resume()
        }
    }

    /// Resumes every task waiting for `count` or less.
    package func reached(_ count: Int) {
        let woken = state.withLock { s -> [Waiter] in
            let due = s.waiters.filter { $0.count <= count }
            if !due.isEmpty { s.waiters.removeAll { $0.count <= count } }
            return due
        }
        for w in woken { w.continuation.resume() }
    }

    /// Resumes every waiting task, whatever it waits for (the count will not change any more).
    package func releaseAll() { reached(.max) }

    /// Takes waiter `id` off the list; nil when it is gone (resumed already).
    private func take(_ id: Int) -> CheckedContinuation<Void, Never>? {
        state.withLock { s in
            guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: i).continuation
        }
    }
}
