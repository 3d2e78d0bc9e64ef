import Dispatch
import Foundation
import Testing
@testable import Futures

@Suite("Promise and Future")
struct PromiseTests {
    init() { LeakWarnings.quiet() }

    @Test("a callback registered before completion runs once with the value")
    func callbackBeforeCompletion() {
        let promise = Promise<Int>()
        let seen = Recorder<Int>()
        promise.future.onSuccess(context: .immediate) { seen.append($0) }
        #expect(seen.values.isEmpty)
        #expect(promise.success(7))
        #expect(seen.values == [7])
    }

    @Test("a promise dropped without being completed warns once, naming its type; completed ones never warn")
    func uncompletedPromiseWarning() throws {
        let expected: Bool
        if let level = ProcessInfo.processInfo.environment["BLUECAP_LOG"] {
            expected = level.lowercased() == "debug"
        } else {
            #if DEBUG
            expected = true
            #else
            expected = false
            #endif
        }
        #expect(FuturesDiagnostics.warnsOnUncompletedPromise == expected)
        do {
            let promise = Promise<LeakMarkerCompleted>()
            promise.success(LeakMarkerCompleted())
            let failed = Promise<LeakMarkerCompleted>()
            failed.future.onComplete(context: .immediate) { _ in }
            failed.failure(TestError(code: 1))
            _ = Future<LeakMarkerCompleted>(value: LeakMarkerCompleted()).map(context: .immediate) { $0 }
            // Abandoned: left pending on purpose, not reported.
            let abandoned = Promise<LeakMarkerCompleted>()
            let token = CancelToken()
            abandoned.future.onComplete(context: .immediate, cancelToken: token) { _ in }
            token.cancel()
        }
        do {
            let leaked = Promise<LeakMarkerDropped>()
            leaked.future.onComplete(context: .immediate) { _ in }
        }
        let messages = LeakWarnings.captured.values
        #expect(!messages.contains { $0.contains("LeakMarkerCompleted") })
        let dropped = messages.filter { $0.contains("Promise<LeakMarkerDropped>") }
        #expect(dropped.count == (expected ? 1 : 0))
        #expect(dropped.allSatisfy { !$0.contains("\n") })
    }

    @Test("a callback registered after completion runs once with the value")
    func callbackAfterCompletion() {
        let promise = Promise<Int>()
        promise.success(3)
        let seen = Recorder<Int>()
        promise.future.onComplete(context: .immediate) { seen.append(try! $0.get()) }
        #expect(seen.values == [3])
    }

    @Test("completing twice is a no-op that returns false and keeps the first result")
    func completeTwice() {
        let promise = Promise<Int>()
        let seen = Recorder<Int>()
        promise.future.onSuccess(context: .immediate) { seen.append($0) }
        #expect(promise.success(1))
        #expect(!promise.success(2))
        #expect(!promise.failure(TestError(code: 1)))
        #expect(!promise.complete(.success(3)))
        #expect(promise.future.result?.successValue == 1)
        #expect(seen.values == [1])
    }

    @Test("onFailure gets the error and onSuccess is skipped")
    func failureCallbacks() {
        let promise = Promise<Int>()
        let errors = Recorder<Int>()
        let values = Recorder<Int>()
        promise.future.onFailure(context: .immediate) { errors.append(($0 as! TestError).code) }
        promise.future.onSuccess(context: .immediate) { values.append($0) }
        promise.failure(TestError(code: 9))
        #expect(errors.values == [9])
        #expect(values.values.isEmpty)
        #expect(promise.isCompleted)
    }

    @Test("completeWith mirrors another future")
    func completeWith() {
        let source = Promise<Int>()
        let target = Promise<Int>()
        target.completeWith(future: source.future)
        #expect(target.future.result == nil)
        source.success(5)
        #expect(target.future.result?.successValue == 5)
    }

    @Test("completed futures are created with a value or an error")
    func completedInitialisers() {
        #expect(Future(value: 4).result?.successValue == 4)
        #expect(Future<Int>(error: TestError(code: 2)).result?.failureValue as? TestError == TestError(code: 2))
    }

    // MARK: Cancel tokens

    @Test("a cancelled token stops a pending callback and reports it")
    func cancelPending() {
        let promise = Promise<Int>()
        let token = CancelToken()
        let seen = Recorder<Int>()
        promise.future.onSuccess(context: .immediate, cancelToken: token) { seen.append($0) }
        #expect(promise.future.waitingCallbackCount == 1)
        #expect(token.cancel())
        #expect(promise.future.waitingCallbackCount == 0)
        #expect(!token.cancel())
        promise.success(1)
        #expect(seen.values.isEmpty)
        #expect(token.isCancelled)
    }

    @Test("a callback registered with an already cancelled token never runs")
    func registerOnCancelledToken() {
        let token = CancelToken()
        token.cancel()
        let seen = Recorder<Int>()
        Future(value: 1).onSuccess(context: .immediate, cancelToken: token) { seen.append($0) }
        #expect(seen.values.isEmpty)
        #expect(token.pendingCount == 0)
    }

    @Test("cancel after the callback ran cancels nothing")
    func cancelAfterRun() {
        let token = CancelToken()
        let seen = Recorder<Int>()
        Future(value: 1).onSuccess(context: .immediate, cancelToken: token) { seen.append($0) }
        #expect(seen.values == [1])
        #expect(!token.cancel())
    }

    @Test("cancel stops a callback queued on a context but not yet started")
    func cancelQueued() {
        let context = ManualContext()
        let token = CancelToken()
        let seen = Recorder<Int>()
        Future(value: 1).onSuccess(context: context, cancelToken: token) { seen.append($0) }
        #expect(token.cancel())
        context.run()
        #expect(seen.values.isEmpty)
    }

    @Test("a token cancels only its own callbacks")
    func tokenScope() {
        let promise = Promise<Int>()
        let token = CancelToken()
        let cancelled = Recorder<Int>()
        let kept = Recorder<Int>()
        promise.future.onSuccess(context: .immediate, cancelToken: token) { cancelled.append($0) }
        promise.future.onSuccess(context: .immediate) { kept.append($0) }
        token.cancel()
        promise.success(2)
        #expect(cancelled.values.isEmpty)
        #expect(kept.values == [2])
    }

    @Test("a promise released uncompleted releases what waits on its future, down a derived chain, while the future is still held")
    func releasedPromiseReleasesCallbacks() {
        weak var captured: Box?
        weak var derivedTail: Future<Int>?
        let held: Future<Int>
        do {
            let promise = Promise<Int>()
            let box = Box()
            captured = box
            promise.future.onSuccess(context: .immediate) { _ in box.touch() }
            // A derived chain holds its upstream strongly while both are pending.
            derivedTail = promise.future.map(context: .immediate) { $0 + 1 }.map(context: .immediate) { $0 + 1 }
            held = promise.future
            #expect(captured != nil)
            #expect(derivedTail != nil)
        }
        // Nobody can complete `held` now: its callbacks and the futures derived from it are gone.
        #expect(captured == nil)
        #expect(derivedTail == nil)
        #expect(held.isCompleted == false)
        #expect(held.waitingCallbackCount == 0)
    }

    @Test("a completed derived future no longer holds the future it waited for")
    func completedDerivedReleasesUpstream() {
        weak var upstream: Future<Int>?
        let derived: Future<Int>
        do {
            let promise = Promise<Int>()
            upstream = promise.future
            derived = promise.future.map(context: .immediate) { $0 * 2 }
            #expect(upstream != nil)
            promise.success(21)
        }
        #expect(derived.result?.successValue == 42)
        #expect(upstream == nil)
    }
}

/// A reference a callback captures, to see when the callback is released.
private final class Box: Sendable {
    func touch() {}
}

private struct LeakMarkerCompleted: Sendable {}
private struct LeakMarkerDropped: Sendable {}
