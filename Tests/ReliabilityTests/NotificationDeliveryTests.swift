// Notification delivery: each subscriber sees each notification once, in order, only from when it
// subscribed; the seed's chain (subscribe inside the reconnect chain) through link drops; capacity.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Reliability: notification delivery, exactly once", .serialized, .timeLimit(.minutes(1)))
struct NotificationDeliveryTests {
    /// Notification i carries UInt32(i), little-endian.
    static func index(_ data: Data?) -> Int? { NotificationReliabilityTests.index(data) }

    /// Sends notifications `range` (value i = UInt32(i)) one by one.
    static func send(_ rig: CentralRig, _ address: String, _ range: Range<Int>) {
        for i in range {
            let reached = rig.simulator.notify(peripheral: address, characteristic: AccelerometerUUIDs.data.uuidString,
                                               value: withUnsafeBytes(of: UInt32(i).littleEndian) { Data($0) })
            #expect(reached == 1, "notification \(i) reached \(reached) centrals")
        }
    }

    /// Waits until `collector` holds `last` (or at least `count` values), then returns its items.
    static func received(_ collector: Collector<Int>, through last: Int) async throws -> [Int] {
        try await waitUntil("notification \(last) received (have \(collector.items))", timeout: .seconds(10)) {
            collector.items.contains(last)
        }
        return collector.items
    }

    /// The seed's chain, as BlueCap's README writes it: connect → (reconnect on `.disconnect`) →
    /// discover → startNotifying → receiveNotificationUpdates, run again after each reconnection.
    static func seedChain(_ p: Peripheral, samples: Collector<Int>, subscriptions: Collector<Int>, events: Collector<ConnectionEvent>) {
        p.connect(disconnectRetries: 5)
            .withFilter { (peripheral, event) in
                events.append(event)
                if event == .disconnect { peripheral.reconnect() }
                return event == .connect
            }
            .flatMap { (peripheral, _) in peripheral.discoverServices([AccelerometerUUIDs.service]) }
            .flatMap { peripheral -> Future<Service> in
                guard let service = peripheral.service(AccelerometerUUIDs.service) else { throw FuturesError.noSuchElement }
                return service.discoverCharacteristics([AccelerometerUUIDs.data])
            }
            .flatMap { service -> Future<Characteristic> in
                guard let data = service.characteristic(AccelerometerUUIDs.data) else { throw FuturesError.noSuchElement }
                return data.startNotifying()
            }
            .flatMap { data -> FutureStream<(characteristic: Characteristic, data: Data?)> in
                let stream = data.receiveNotificationUpdates(capacity: 10)
                subscriptions.append(subscriptions.items.count + 1)
                return stream
            }
            .onSuccess(context: .immediate) { update in
                if let i = index(update.data) { samples.append(i) }
            }
    }

    @Test("the seed's chain subscribing inside the reconnect chain, through two link drops: every notification once, in order",
          arguments: [false, true])
    func seedChainThroughTwoDrops(propertiesChanged: Bool) async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let a = addresses(1)[0]
        rig.simulator.add(simulatedSensorTag(a))
        if propertiesChanged {
            // AcquireNotify refused: values arrive as Value PropertiesChanged (StartNotify).
            rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.AcquireNotify", action: .error(.notSupported)))
        }
        let p = try await rig.discover(a)
        let samples = Collector<Int>(), subscriptions = Collector<Int>(), events = Collector<ConnectionEvent>()
        Self.seedChain(p, samples: samples, subscriptions: subscriptions, events: events)
        try await subscriptions.wait(for: 1)
        try await waitUntil("notifying") { p.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.data)?.isNotifying == true }
        Self.send(rig, a, 0..<5)
        _ = try await Self.received(samples, through: 4)
        for drop in 1...2 {
            rig.simulator.dropLink(device: p.identifier)
            try await events.wait(for: 2 * drop + 1)  // .disconnect, then .connect after reconnect()
            try await subscriptions.wait(for: drop + 1)
            try await waitUntil("notifying after reconnection \(drop)") { p.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.data)?.isNotifying == true }
            Self.send(rig, a, (5 * drop)..<(5 * drop + 5))
            _ = try await Self.received(samples, through: 5 * drop + 4)
        }
        // A last one: anything duplicated or replayed before it has arrived by now.
        Self.send(rig, a, 15..<16)
        let got = try await Self.received(samples, through: 15)
        #expect(got == Array(0..<16))
        #expect(events.items == [.connect, .disconnect, .connect, .disconnect, .connect])
        p.terminate()
    }

    @Test("receiveNotificationUpdates(capacity:) after startNotifying(): the stream has that capacity and keeps that many for a late first subscription")
    func capacityHonoured() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (a, p, service, _) = try await rig.readyTag()
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        let watcher = Collector<Int>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let i = Self.index($0.data) { watcher.append(i) } }
        _ = try await data.startNotifying().value
        let stream = data.receiveNotificationUpdates(capacity: 3)
        #expect(stream.capacity == 3)
        Self.send(rig, a, 0..<10)
        _ = try await Self.received(watcher, through: 9)
        // Subscribing now: the stream kept the last 3 notifications that arrived after it was made.
        let late = Collector<Int>()
        stream.onSuccess(context: .immediate) { if let i = Self.index($0.data) { late.append(i) } }
        #expect(try await late.wait(for: 3) == [7, 8, 9])
        #expect(stream.keptCount == 3)
        p.terminate()
    }

    @Test("a subscriber that comes while another one is streaming gets only what arrives after it subscribed")
    func noReplayToLateSubscriber() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (a, p, service, _) = try await rig.readyTag()
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        let first = Collector<Int>(), second = Collector<Int>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let i = Self.index($0.data) { first.append(i) } }
        _ = try await data.startNotifying().value
        Self.send(rig, a, 0..<5)
        _ = try await Self.received(first, through: 4)
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let i = Self.index($0.data) { second.append(i) } }
        Self.send(rig, a, 5..<10)
        _ = try await Self.received(first, through: 9)
        #expect(try await Self.received(second, through: 9) == Array(5..<10))
        #expect(first.items == Array(0..<10))
        p.terminate()
    }

    @Test("two independent seed chains on one characteristic, through a link drop: each gets every notification once, in order")
    func twoIndependentChains() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let a = addresses(1)[0]
        rig.simulator.add(simulatedSensorTag(a))
        let p = try await rig.discover(a)
        let samples = [Collector<Int>(), Collector<Int>()]
        let subscriptions = [Collector<Int>(), Collector<Int>()]
        let events = [Collector<ConnectionEvent>(), Collector<ConnectionEvent>()]
        // Both chains follow one connect() stream (a second connect() would finish the first);
        // the first one reconnects.
        let connection = p.connect(disconnectRetries: 5)
        for k in 0..<2 {
            connection
                .withFilter { (peripheral, event) in
                    events[k].append(event)
                    if event == .disconnect && k == 0 { peripheral.reconnect() }
                    return event == .connect
                }
                .flatMap { (peripheral, _) in peripheral.discoverServices([AccelerometerUUIDs.service]) }
                .flatMap { peripheral -> Future<Characteristic> in
                    guard let data = peripheral.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.data) else { throw FuturesError.noSuchElement }
                    return data.startNotifying()
                }
                .flatMap { data -> FutureStream<(characteristic: Characteristic, data: Data?)> in
                    defer { subscriptions[k].append(k) }
                    return data.receiveNotificationUpdates()
                }
                .onSuccess(context: .immediate) { if let i = Self.index($0.data) { samples[k].append(i) } }
        }
        for k in 0..<2 { try await subscriptions[k].wait(for: 1) }
        try await waitUntil("notifying") { p.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.data)?.isNotifying == true }
        Self.send(rig, a, 0..<5)
        for k in 0..<2 { _ = try await Self.received(samples[k], through: 4) }
        rig.simulator.dropLink(device: p.identifier)
        for k in 0..<2 { try await subscriptions[k].wait(for: 2) }
        try await waitUntil("notifying again") { p.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.data)?.isNotifying == true }
        Self.send(rig, a, 5..<10)
        for k in 0..<2 {
            #expect(try await Self.received(samples[k], through: 9) == Array(0..<10), "chain \(k)")
        }
        p.terminate()
    }

    @Test("notifications between startNotifying() and the first subscription are handed to that subscription, once")
    func heldUntilFirstSubscription() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (a, p, service, _) = try await rig.readyTag()
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        _ = try await data.startNotifying().value
        Self.send(rig, a, 0..<3)
        try await waitUntil("value 2 arrived") { Self.index(data.value) == 2 }
        let first = Collector<Int>(), second = Collector<Int>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let i = Self.index($0.data) { first.append(i) } }
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let i = Self.index($0.data) { second.append(i) } }
        Self.send(rig, a, 3..<5)
        #expect(try await Self.received(first, through: 4) == Array(0..<5))
        #expect(try await Self.received(second, through: 4) == [3, 4])
        p.terminate()
    }
}
