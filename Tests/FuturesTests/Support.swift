import Dispatch
import Foundation
import Synchronization
@testable import Futures
import Locking

/// An error thrown by tests, identified by a code.
struct TestError: Error, Equatable {
    let code: Int
}

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>([])
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

/// A countdown that a test waits on with a deadline.
final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let expected: Int
    init(_ expected: Int = 1) { self.expected = expected }
    func signal() { semaphore.signal() }
    /// Waits for `expected` signals; false if the deadline passes first.
    func wait(seconds: Double = 5) -> Bool {
        let deadline = DispatchTime.now() + seconds
        for _ in 0..<expected where semaphore.wait(timeout: deadline) == .timedOut { return false }
        return true
    }
}

/// An atomic counter usable from `@Sendable` closures.
final class AtomicCount: Sendable {
    private let value = Atomic<Int>(0)
    @discardableResult func increment(by amount: Int = 1) -> Int {
        value.wrappingAdd(amount, ordering: .relaxed).newValue
    }
    var current: Int { value.load(ordering: .relaxed) }
}

extension Result {
    /// The success value, or nil.
    var successValue: Success? { try? get() }
    /// The failure, or nil.
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Awaits `future` for at most 30 seconds.
///
/// The 30 s bound only keeps a broken test from hanging: a loaded machine (the stress suite's
/// eight threads on two cores) can hold the cooperative pool for seconds.
func awaitValue<T>(_ future: Future<T>) async throws -> T {
    try await future.timeout(after: .seconds(30)).value
}

/// Runs blocking `work` on a thread of its own so it occupies neither a cooperative-pool
/// thread nor a Dispatch worker that other (async) tests need (see ``onThreads(_:_:)``).
///
/// The thread has a 512 KiB stack, as small as a Dispatch worker's, so the long-chain tests
/// that run here would overflow it if the library recursed.
func offPool<R: Sendable>(_ work: @escaping @Sendable () -> R) async -> R {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.stackSize = 512 * 1024
        thread.start()
    }
}

/// The rounds a concurrency stress test runs: `rounds`, or a tenth of them when the tests run
/// under a sanitizer (`Scripts/sanitize` sets `BLUECAP_SANITIZER`). ThreadSanitizer reports two
/// accesses that no lock or atomic orders, whenever they happen, so a tenth of the rounds walks
/// the same code paths between the same threads at a tenth of its several-times-slower cost
/// (the 100,000-promise test took 112 s of the sanitized run); the plain run keeps them all.
func stressRounds(_ rounds: Int) -> Int {
    ProcessInfo.processInfo.environment["BLUECAP_SANITIZER", default: ""].isEmpty ? rounds : max(1, rounds / 10)
}

/// Runs `body(i)` for each `i` in `0..<count`, each on a thread of its own, and returns when all
/// have finished.
///
/// Not `DispatchQueue.concurrentPerform` nor `DispatchQueue.global()`: on Linux their worker
/// pool is as wide as the machine has cores, and every serial queue of the process runs on it,
/// so seconds of CPU-bound work there freeze the queues that other tests (and the library's
/// default context) depend on.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    for i in 0..<count {
        Thread.detachNewThread {
            body(i)
            done.signal()
        }
    }
    for _ in 0..<count { done.wait() }
}

/// Routes the library's uncompleted-promise warnings away from standard error for the whole
/// test process (many tests leave promises pending on purpose), keeping only the ones about
/// the `LeakMarker…` types that the warning's own test uses. Every suite calls ``quiet()``.
enum LeakWarnings {
    static let captured = Recorder<String>()
    private static let installed: Void = {
        FuturesDiagnostics.sink.withLock { sink in
            sink = WarningSink { message in
                if message.contains("LeakMarker") { captured.append(message) }
            }
        }
    }()
    static func quiet() { _ = installed }
}
