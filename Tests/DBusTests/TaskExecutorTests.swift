// ConnectionTaskExecutor: tasks that prefer it run on the owner thread, queued, never inline.
import DBus
import Dispatch
import Testing
import TestSupport
import Locking

@Suite("Connection task executor: tasks on the owner thread")
struct TaskExecutorTests {
    @Test("a task preferring the executor runs on the owner thread, and is back there after awaiting a call")
    func taskRunsOnOwnerThread() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([echoInterface(signature: "s")], at: "/t")
            defer { h.unexport() }
            let task = Task(executorPreference: client.taskExecutor) { () throws -> [Bool] in
                var onOwner = [client.isOnOwnerThread]
                for n in 0..<3 {
                    let reply = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.Test",
                                                      member: "Echo", arguments: [.string("r\(n)")])
                    #expect(reply.body == [.string("r\(n)")])
                    onOwner.append(client.isOnOwnerThread)
                }
                return onOwner
            }
            #expect(try await task.value == [true, true, true, true])
            // Without the preference the same task runs on the global executor's threads.
            #expect(await Task.detached { client.isOnOwnerThread }.value == false)
        }
    }

    @Test("a task resumed from the owner thread runs after the owner's current work, not inside it")
    func resumptionIsQueuedNotInline() async throws {
        try await withTestBus { bus in
            let client = try bus.connect()
            let order = Locked<[String]>([])
            let task = Task(executorPreference: client.taskExecutor) {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    // From another thread, owner work that resumes the task in its middle.
                    DispatchQueue.global().async {
                        client.execute {
                            order.withLock { $0.append("owner work begins") }
                            continuation.resume()
                            order.withLock { $0.append("owner work ends") }
                        }
                    }
                }
                order.withLock { $0.append("task resumed, on owner: \(client.isOnOwnerThread)") }
            }
            await task.value
            #expect(order.withLock { $0 } == ["owner work begins", "owner work ends", "task resumed, on owner: true"])
        }
    }

    @Test("after the connection closes, a task preferring its executor still runs (on the global executor)")
    func closedConnectionFallsBack() async throws {
        try await withTestBus { bus in
            let client = try bus.connect()
            let executor = client.taskExecutor
            client.close()
            let task = Task(executorPreference: executor) { () -> Bool in
                await Task.yield()
                return client.isOnOwnerThread
            }
            #expect(await task.value == false)
        }
    }
}
