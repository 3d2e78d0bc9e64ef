import Testing
@testable import Futures

@Suite("async/await bridge")
struct AsyncBridgeTests {
    init() { LeakWarnings.quiet() }

    @Test("value returns the value of a completed future")
    func completedValue() async throws {
        #expect(try await Future(value: 3).value == 3)
    }

    @Test("value waits for a later completion")
    func laterValue() async throws {
        let promise = Promise<Int>()
        let waiter = Task { try await promise.future.value }
        Future(value: ()).onComplete { _ in promise.success(11) }
        #expect(try await waiter.value == 11)
    }

    @Test("value throws the future's error")
    func failedValue() async {
        await #expect(throws: TestError(code: 4)) { try await Future<Int>(error: TestError(code: 4)).value }
    }

    @Test("cancelling the waiting task stops the wait with CancellationError and removes the callback")
    func cancelWhileWaiting() async throws {
        let promise = Promise<Int>()
        let waiter = Task { try await promise.future.value }
        // Wait (bounded) until the waiter has registered its callback.
        var spins = 0
        while promise.future.waitingCallbackCount == 0 && spins < 100_000 {
            await Task.yield()
            spins += 1
        }
        #expect(promise.future.waitingCallbackCount == 1)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(promise.future.waitingCallbackCount == 0)
        #expect(!promise.future.isCompleted)
        #expect(promise.success(1))
    }

    @Test("awaiting in an already cancelled task throws CancellationError")
    func alreadyCancelled() async {
        let promise = Promise<Int>()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await promise.future.value
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }
}
