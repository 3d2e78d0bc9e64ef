import Testing
@testable import Futures

@Suite("Callback list and dispatch routes")
struct CallbackListTests {
    init() { LeakWarnings.quiet() }

    @Test("several callbacks on a pending future run once each, in registration order, on their contexts")
    func manyCallbacksInOrder() {
        let promise = Promise<Int>()
        let manual = ManualContext()
        let seen = Recorder<String>()
        promise.future.onSuccess(context: .immediate) { seen.append("a\($0)") }
        promise.future.onSuccess(context: manual) { seen.append("b\($0)") }
        promise.future.onSuccess(context: .immediate) { seen.append("c\($0)") }
        promise.future.onComplete(context: .immediate) { seen.append("d\(try! $0.get())") }
        #expect(promise.future.waitingCallbackCount == 4)
        promise.success(1)
        #expect(seen.values == ["a1", "c1", "d1"])
        #expect(manual.run() == 1)
        #expect(seen.values == ["a1", "c1", "d1", "b1"])
        #expect(promise.future.waitingCallbackCount == 0)
    }

    @Test("cancelling the first of several waiting callbacks keeps the others in order")
    func cancelFirstKeepsRest() {
        let promise = Promise<Int>()
        let token = CancelToken()
        let seen = Recorder<String>()
        promise.future.onSuccess(context: .immediate, cancelToken: token) { _ in seen.append("cancelled") }
        promise.future.onSuccess(context: .immediate) { seen.append("x\($0)") }
        promise.future.onSuccess(context: .immediate) { seen.append("y\($0)") }
        #expect(token.cancel())
        #expect(promise.future.waitingCallbackCount == 2)
        promise.success(2)
        #expect(seen.values == ["x2", "y2"])
    }

    @Test("the callback list appends after its inline first element and removes in place")
    func listOperations() {
        var list = CallbackList<Int>()
        #expect(list.isEmpty && list.count == 0)
        for value in 1...5 { list.append(value) }
        #expect(list.count == 5)
        list.removeAll { $0 == 1 || $0 == 4 }
        var out: [Int] = []
        list.forEach { out.append($0) }
        #expect(out == [2, 3, 5])
        let taken = list.takeAll()
        #expect(list.isEmpty && taken.count == 3)
        list.removeAll { _ in true }
        #expect(list.isEmpty)
    }

    @Test("an immediate callback completing another promise runs its callbacks after it returns")
    func immediateNestedOrder() {
        let first = Promise<Int>()
        let second = Promise<Int>()
        let seen = Recorder<String>()
        second.future.onSuccess(context: .immediate) { seen.append("second \($0)") }
        first.future.onSuccess(context: .immediate) { value in
            second.success(value + 1)
            seen.append("first \(value)")
        }
        first.success(1)
        #expect(seen.values == ["first 1", "second 2"])
    }
}
