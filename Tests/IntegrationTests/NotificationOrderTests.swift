// Numbered notifications from a PeripheralManager on hci1 through the simulator's virtual radio
// to a CentralManager on hci0, over both transports (AcquireNotify socket, StartNotify
// PropertiesChanged): every number must arrive exactly once, in order, through a futures chain
// shaped like the examples' central (derived from the capacity-1 state stream).

import BlueCapKit
import BlueZSimulator
import DBus
import Dispatch
import Foundation
import Futures
import Synchronization
import Testing
import TestSupport

@Suite("Notification order and completeness over the virtual radio", .serialized)
struct NotificationOrderTests {
    static let serviceUUID: BLEUUID = "0000FEE0-0000-1000-8000-00805F9B34FB"
    /// Flags "notify": the central uses AcquireNotify.
    static let socketUUID: BLEUUID = "0000FEE1-0000-1000-8000-00805F9B34FB"
    /// Flags "indicate" only: the central uses StartNotify (Value PropertiesChanged).
    static let signalUUID: BLEUUID = "0000FEE2-0000-1000-8000-00805F9B34FB"

    /// A peripheral serving both characteristics on hci1 and a central connected to it on hci0.
    final class World: Sendable {
        let rig: PeripheralRig
        let service: MutableService
        let remote: Service

        init() async throws {
            service = MutableService(uuid: NotificationOrderTests.serviceUUID, characteristics: [
                MutableCharacteristic(uuid: NotificationOrderTests.socketUUID, properties: [.read, .notify],
                                      permissions: [.readable], value: Data([0, 0, 0, 0])),
                MutableCharacteristic(uuid: NotificationOrderTests.signalUUID, properties: [.read, .indicate],
                                      permissions: [.readable], value: Data([0, 0, 0, 0])),
            ])
            let rig = try await PeripheralRig.start(serving: service, advertisingAs: "Counter")
            self.rig = rig
            do { remote = try await rig.connectService() } catch {
                await rig.stop()
                throw error
            }
        }

        var central: CentralManager { rig.central }

        func stop() async { await rig.stop() }

        /// The examples' chain: state stream (capacity 1) → startNotifying → notification
        /// updates → decode, on `context`. Returns the numbers stream and the raw updates stream.
        func numbers(_ uuid: BLEUUID, context: any ExecutionContext) throws
            -> (numbers: FutureStream<UInt32>, characteristic: Characteristic) {
            let characteristic = try need(remote.characteristic(uuid), "characteristic \(uuid)")
            let numbers = central.whenStateChanges()
                .withFilter(context: context) { $0 == .poweredOn }
                .flatMap(context: context) { _ in characteristic.startNotifying() }
                .flatMap(context: context) { c in c.receiveNotificationUpdates(capacity: 10) }
                .map(context: context) { update -> UInt32 in
                    guard let data = update.data, data.count == 4 else { throw Missing(description: "bad value \(String(describing: update.data))") }
                    return data.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
                }
            return (numbers, characteristic)
        }

        /// Waits until the central subscribed to `uuid` on the peripheral side.
        func waitSubscribed(_ uuid: BLEUUID) async throws {
            let local = try need(service.characteristic(uuid), "local characteristic")
            let events = Collector<SubscriptionEvent>()
            local.whenSubscriptionChanges().onSuccess(context: .immediate) { events.append($0) }
            while !local.isNotifying {
                try await events.wait(for: events.items.count + 1, timeout: .seconds(10))
            }
        }

        /// Sends 1...count on `uuid`, `pause` microseconds apart, on a thread of its own;
        /// returns how many `updateValue` reported as sent.
        func send(_ uuid: BLEUUID, count: UInt32, pauseMicroseconds pause: UInt32) async throws -> Int {
            let local = try need(service.characteristic(uuid), "local characteristic")
            return await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    var sent = 0
                    for n in 1...count {
                        if local.updateValue(withData: withUnsafeBytes(of: n.littleEndian) { Data($0) }) { sent += 1 }
                        if pause > 0 { usleep(pause) }
                    }
                    continuation.resume(returning: sent)
                }
            }
        }
    }

    /// Threads that keep the CPU busy until stopped (the machine load of a full test run).
    final class Load: Sendable {
        private let stopFlag = Atomic<Bool>(false)
        private let done = DispatchGroup()

        init(threads: Int) {
            for _ in 0..<threads {
                done.enter()
                Thread.detachNewThread { [self] in
                    var x: UInt64 = 1
                    while !stopFlag.load(ordering: .relaxed) { x = x &* 6364136223846793005 &+ 1 }
                    withExtendedLifetime(x) {}
                    done.leave()
                }
            }
        }

        func stop() {
            stopFlag.store(true, ordering: .relaxed)
            _ = done.wait(timeout: .now() + 5)
        }
    }

    // MARK: Deterministic: the subscriber's queue is busy while notifications arrive

    @Test("a subscriber whose queue is busy while 20 notifications arrive still gets every number once, in order",
          arguments: [socketUUID, signalUUID])
    func busySubscriberGetsEveryNumber(uuid: BLEUUID) async throws {
        let world = try await World()
        defer { Task { await world.stop() } }
        let queue = DispatchQueue(label: "notification order subscriber")
        let (numbers, characteristic) = try world.numbers(uuid, context: QueueContext(queue: queue))
        let got = Collector<UInt32>()
        // Counts raw arrivals on the central (before the chain's queue): the subscriber below
        // holds its queue at number 1 until 20 more numbers have arrived.
        let arrived = DispatchSemaphore(value: 0)
        let arrivals = Atomic<Int>(0)
        let releaseAt = 21
        numbers.onSuccess(context: QueueContext(queue: queue)) { n in
            got.append(n)
            if n == 1 { _ = arrived.wait(timeout: .now() + 10) }
        }
        try await world.waitSubscribed(uuid)
        characteristic.receiveNotificationUpdates().onSuccess(context: .immediate) { _ in
            if arrivals.add(1, ordering: .relaxed).newValue == releaseAt { arrived.signal() }
        }
        let sent = try await world.send(uuid, count: 40, pauseMicroseconds: 2_000)
        #expect(sent == 40)
        let values = (try? await got.wait(for: 40, timeout: .seconds(15))) ?? got.items
        #expect(values == Array(1...40))
        #expect(characteristic.notificationTransport == (uuid == Self.socketUUID ? .acquiredSocket : .propertiesChanged))
        #expect(numbers.droppedCount == 0)
    }

    // MARK: Stress: a loaded machine

    @Test("under CPU load, 300 numbers at about 200 per second arrive exactly once and in order",
          arguments: [socketUUID, signalUUID])
    func numbersUnderLoad(uuid: BLEUUID) async throws {
        let world = try await World()
        defer { Task { await world.stop() } }
        let (numbers, characteristic) = try world.numbers(uuid, context: .futuresDefault)
        let count: UInt32 = 300
        let got = Collector<UInt32>()
        // The stream is over when the last number arrives: delivery is in order, so every number
        // before it has arrived by then, or never will. That, not a duration, ends the wait.
        let last = Collector<UInt32>()
        numbers.onSuccess { n in
            got.append(n)
            if n == count { last.append(n) }
        }
        try await world.waitSubscribed(uuid)
        // Three busy threads load two cores; under ThreadSanitizer (several times slower) one is
        // enough to reach the same pressure, and three stall the central's socket reader long
        // enough for the notification socket to fill, where BlueZ (and the simulator) drop.
        let load = Load(threads: Sanitizers.thread ? 1 : 3)
        let sent = try await world.send(uuid, count: count, pauseMicroseconds: 5_000)
        // The deadline only guards against a hang (the last number lost): far beyond what any
        // build, sanitized or not, needs for 300 numbers, and it scales with nothing.
        _ = try? await last.wait(for: 1, timeout: .seconds(120))
        load.stop()
        #expect(sent == Int(count))
        let received = got.items
        let missing = Set(1...count).subtracting(received).sorted()
        #expect(received.elementsEqual(1...count), "\(received.count) received; missing \(missing.count): \(missing.prefix(20))")
        #expect(characteristic.notificationTransport == (uuid == Self.socketUUID ? .acquiredSocket : .propertiesChanged))
    }
}
