// BluetoothSession.taskExecutor: async code on the session's D-Bus thread, as a user writes it.
@_spi(Testing) import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Session task executor: async/await without thread hops", .serialized, .timeLimit(.minutes(1)))
struct SessionTaskExecutorTests {
    let tag = "C0:FF:EE:00:00:41"

    @Test("reads awaited on the session's task executor return their values and resume on its D-Bus thread")
    func readsOnSessionExecutor() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let period = try #require(service.characteristic(AccelerometerUUIDs.period))
        let client = h.client
        let seen = try await withTaskExecutorPreference(h.session.taskExecutor) { () throws -> [String] in
            var seen: [String] = []
            for n in 0..<5 {
                if n == 2 { _ = try await period.write(UInt8(42)).value }
                let value = try await period.read().value.value(as: UInt8.self)
                seen.append("\(value.map(String.init) ?? "nil") on owner: \(client.isOnOwnerThread)")
            }
            return seen
        }
        #expect(seen == ["100 on owner: true", "100 on owner: true", "42 on owner: true", "42 on owner: true", "42 on owner: true"])
    }

    @Test("reads in flight from a task group on the session's executor all complete, in any order")
    func concurrentReadsOnSessionExecutor() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let period = try #require(service.characteristic(AccelerometerUUIDs.period))
        let values = try await withTaskExecutorPreference(h.session.taskExecutor) {
            try await withThrowingTaskGroup(of: UInt8?.self) { group in
                for _ in 0..<16 { group.addTask { try await period.read().value.value(as: UInt8.self) } }
                return try await group.reduce(into: [UInt8?]()) { $0.append($1) }
            }
        }
        #expect(values == Array(repeating: 100, count: 16))
    }

    @Test("cancelling a task awaiting an unanswered read on the session's executor throws CancellationError there; later reads work")
    func cancelledReadOnSessionExecutor() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let period = try #require(service.characteristic(AccelerometerUUIDs.period))
        h.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply, count: 1))
        let client = h.client
        let sent = Collector<Bool>()
        let task = Task(executorPreference: h.session.taskExecutor) { () -> String in
            let read = period.read(timeout: .seconds(30))
            sent.append(true)
            do {
                _ = try await read.value
                return "answered"
            } catch is CancellationError {
                return "cancelled, on owner: \(client.isOnOwnerThread)"
            } catch {
                return "\(error)"
            }
        }
        try await sent.wait(for: 1)
        task.cancel()
        #expect(await task.value == "cancelled, on owner: true")
        let again = try await withTaskExecutorPreference(h.session.taskExecutor) {
            try await period.read().value.value(as: UInt8.self)
        }
        #expect(again == 100)
    }

    @Test("notifications iterated on the session's executor arrive in order on its D-Bus thread (AcquireNotify and StartNotify)",
          arguments: [false, true])
    func notificationsOnSessionExecutor(indicate: Bool) async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag, dataFlags: indicate ? [.read, .indicate] : [.read, .notify]))
        let (_, service, _) = try await h.ready(tag)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        let updates = data.receiveNotificationUpdates(capacity: 64)
        _ = try await data.startNotifying().value
        #expect(data.notificationTransport == (indicate ? .propertiesChanged : .acquiredSocket))
        let client = h.client
        let consumer = Task(executorPreference: h.session.taskExecutor) { () throws -> [String] in
            var got: [String] = []
            for try await update in updates.values {
                got.append("\(update.data?.first ?? 0) on owner: \(client.isOnOwnerThread)")
                if got.count == 20 { break }
            }
            return got
        }
        for n in 1...20 {
            #expect(h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([UInt8(n)])) == 1)
        }
        #expect(try await consumer.value == (1...20).map { "\($0) on owner: true" })
    }

    @Test("a closed session's task executor still runs tasks, off the closed connection's thread")
    func closedSessionExecutor() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let executor = h.session.taskExecutor
        _ = try await h.session.close().value
        let client = h.client
        let promise = Promise<Int>()
        let task = Task(executorPreference: executor) { () throws -> String in
            let value = try await promise.future.value
            return "\(value) on owner: \(client.isOnOwnerThread)"
        }
        promise.success(7)
        #expect(try await task.value == "7 on owner: false")
    }
}
