import Dispatch
import Foundation
import Synchronization
@testable import Futures

/// An error thrown by tests, identified by a code.
struct TestError: Error, Equatable {
    let code: Int
}

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])
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

/// Awaits `future` for at most five seconds.
func awaitValue<T>(_ future: Future<T>) async throws -> T {
    try await future.timeout(after: .seconds(5)).value
}

/// Runs blocking `work` on a global-queue thread so it does not occupy a cooperative-pool
/// thread that other (async) tests need.
func offPool<R: Sendable>(_ work: @escaping @Sendable () -> R) async -> R {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
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
