// DeadlineTimer: every one-shot deadline of a SystemClock on one dispatch timer source.
import Dispatch
import Locking

// MARK: - DeadlineTimer

/// The one-shot work of a ``SystemClock``: deadlines in a min-heap, one dispatch timer source
/// armed for the earliest.
///
/// A timer source per deadline costs, for every operation that carries a timeout (each read,
/// write, connect), a source allocated and armed (the dispatch manager thread updates its timer
/// list) and then cancelled (its cancellation runs on the target queue): two thread wake-ups for
/// a deadline that almost never fires. Here scheduling a deadline later than the armed one is a
/// heap insertion under a lock, and cancelling one drops its work under the lock; the source is
/// re-armed only when a deadline earlier than the armed one arrives, or when it fires.
///
/// Cancelled entries leave the heap lazily; once they outnumber the live ones (and there are
/// more than 64) the heap is rebuilt from the live entries, so it holds at most about twice the
/// live deadlines. Due work is submitted to the clock's queue, each item on its own, as a timer
/// source per deadline would run it.
///
/// `@unchecked Sendable`: `source` is set once in `init`; it is re-armed only under `state`'s
/// lock, and libdispatch documents setting a source's timer and cancelling it as thread-safe.
/// Everything else lives in `state` (a lock).
final class DeadlineTimer: @unchecked Sendable {
    private struct Entry {
        var deadline: UInt64
        var id: Int
    }

    private struct State {
        var heap: [Entry] = []
        var work: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
        /// The deadline the source is armed for (`UInt64.max`: not armed).
        var armed = UInt64.max
        /// The timer itself while it has work to run: a clock dropped by its owner (such as
        /// the one-shot `SystemClock(queue:)` of `QueueContext.schedule`) still runs its
        /// scheduled work, as a timer source per deadline did.
        var keepAlive: DeadlineTimer?

        mutating func push(_ entry: Entry) {
            heap.append(entry)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard heap[i].deadline < heap[parent].deadline else { break }
                heap.swapAt(i, parent)
                i = parent
            }
        }

        mutating func popMin() -> Entry? {
            guard !heap.isEmpty else { return nil }
            heap.swapAt(0, heap.count - 1)
            let min = heap.removeLast()
            siftDown(0)
            return min
        }

        mutating func siftDown(_ start: Int) {
            var i = start
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count && heap[l].deadline < heap[m].deadline { m = l }
                if r < heap.count && heap[r].deadline < heap[m].deadline { m = r }
                guard m != i else { return }
                heap.swapAt(i, m)
                i = m
            }
        }

        /// Drops cancelled entries from the top; the earliest live deadline, if any.
        mutating func earliestLive() -> UInt64? {
            while let top = heap.first {
                if work[top.id] != nil { return top.deadline }
                _ = popMin()
            }
            return nil
        }

        /// Rebuilds the heap from the live entries once cancelled ones outnumber them.
        mutating func compactIfNeeded() {
            guard heap.count > 64, heap.count > 2 * work.count else { return }
            heap.removeAll { work[$0.id] == nil }
            var i = heap.count / 2
            while i > 0 {
                i -= 1
                siftDown(i)
            }
        }
    }

    // Sendable through this lock: the heap, the work and the armed deadline live in it.
    private let state = Locked(State())
    private let queue: DispatchQueue
    private let source: any DispatchSourceTimer

    init(queue: DispatchQueue) {
        self.queue = queue
        source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler { [weak self] in self?.fire() }
        source.resume()
    }

    deinit { source.cancel() }

    /// Runs `work` on the queue `delay` from now, unless the returned task is cancelled first.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ClockTask {
        let deadline = (DispatchTime.now() + delay.dispatchInterval).uptimeNanoseconds
        let id = state.withLock { s -> Int in
            if s.work.isEmpty { s.keepAlive = self }
            s.nextID += 1
            s.work[s.nextID] = work
            s.push(Entry(deadline: deadline, id: s.nextID))
            if deadline < s.armed {
                s.armed = deadline
                // Armed under the lock, so that two schedulers cannot leave the later deadline armed.
                source.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .nanoseconds(0))
            }
            return s.nextID
        }
        return ClockTask { [weak self] in self?.cancel(id) }
    }

    private func cancel(_ id: Int) {
        let (dropped, timer) = state.withLock { s -> ((@Sendable () -> Void)?, DeadlineTimer?) in
            let dropped = s.work.removeValue(forKey: id)
            if dropped != nil { s.compactIfNeeded() }
            return (dropped, s.work.isEmpty ? s.keepAlive.take() : nil)
        }
        _ = (dropped, timer)  // released after the lock (the work may own anything)
    }

    /// The source fired: submits every due work, re-arms for the next live deadline.
    private func fire() {
        let (due, timer) = state.withLock { s -> ([@Sendable () -> Void], DeadlineTimer?) in
            let now = DispatchTime.now().uptimeNanoseconds
            var due: [@Sendable () -> Void] = []
            while let next = s.earliestLive(), next <= now, let entry = s.popMin() {
                if let work = s.work.removeValue(forKey: entry.id) { due.append(work) }
            }
            if let next = s.earliestLive() {
                s.armed = next
                source.schedule(deadline: DispatchTime(uptimeNanoseconds: next), leeway: .nanoseconds(0))
            } else {
                s.armed = .max
            }
            return (due, s.work.isEmpty ? s.keepAlive.take() : nil)
        }
        for work in due { queue.async(execute: work) }
        _ = timer
    }
}
