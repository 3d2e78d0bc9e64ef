// Services that change while connected, and dropping a peripheral's cached GATT database,
// through the public API.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Services changing and cache drop", .serialized, .timeLimit(.minutes(1)))
struct ServiceChangeTests {
    let tag = "C0:FF:EE:00:00:01"
    let battery = BLEUUID("180F")
    let environment = BLEUUID("181A")

    /// The SensorTag with the battery service replaced by an environmental sensing service.
    var changed: SimulatedPeripheral {
        SimulatedPeripheral.spec(address: tag).name("SensorTag")
            .advertising(uuids: [AccelerometerUUIDs.service.uuidString])
            .service("181A") { $0.characteristic("2A6E", flags: [.read], value: Data([0x10, 0x09])) }
            .service(AccelerometerUUIDs.service.uuidString) {
                $0.characteristic(AccelerometerUUIDs.data.uuidString, flags: [.read, .notify], value: Data([0, 0, 64]))
                $0.characteristic(AccelerometerUUIDs.enabled.uuidString, flags: [.read, .write], value: Data([0]))
                $0.characteristic(AccelerometerUUIDs.period.uuidString, flags: [.read, .write], value: Data([100]))
            }
    }

    @Test("Service Changed while connected: the removed service's objects are terminated, the new one is reported", arguments: [
        ServicesChangeStyle.serviceChangedIndication, .reresolve,
    ])
    func serviceChangedReported(style: ServicesChangeStyle) async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag, extraServiceFirst: true))
        let (p, accelerometer, events) = try await h.ready(tag)
        let oldBattery = try #require(p.service(battery))
        let level = try #require(try await oldBattery.discoverCharacteristics().value.characteristic(BLEUUID("2A19")))
        let ended = Collector<String>()
        level.receiveNotificationUpdates().onComplete(context: .immediate) { r in
            if case .failure(let e) = r { ended.append("\(e)") }
        }
        let changes = Collector<ServicesChange>()
        p.whenServicesChange().onSuccess(context: .immediate) { changes.append($0) }

        h.simulator.changeServicesWhileConnected(peripheral: tag, to: changed, style: style)
        // An indication: the removal at once, the addition once bluetoothd has read the range
        // again (serviceRediscoveryDelay, 200 ms), two changes as real bluetoothd made them
        // against a Bumble peer; a re-resolution: one change.
        let expected = style == .serviceChangedIndication ? 2 : 1
        let seen = try await changes.wait(for: expected)
        #expect(seen.flatMap(\.added).map(\.uuid) == [environment])
        #expect(seen.flatMap(\.removed).map(\.uuid) == [battery])
        #expect(seen.flatMap(\.removed).first === oldBattery)
        if style == .serviceChangedIndication {
            #expect(seen[0].added.isEmpty && seen[1].removed.isEmpty, "the removal first, then the addition: \(seen)")
        }
        #expect(seen.allSatisfy { $0.peripheral === p })
        #expect(changes.items.count == expected)
        try await ended.wait(for: 1)
        #expect(ended.items[0].contains("Terminated"))
        #expect(p.service(battery) == nil)
        let temperature = try await #require(p.service(environment)).discoverCharacteristics().value
        #expect(try await #require(temperature.characteristic(BLEUUID("2A6E"))).read().value.value == Data([0x10, 0x09]))
        if style == .serviceChangedIndication {
            #expect(p.service(AccelerometerUUIDs.service) === accelerometer)
        }
        #expect(p.isConnected && events.events.items == [.connect])

        // A drop and a new connection are not service changes.
        h.simulator.dropLink(device: p.identifier)
        try await events.events.wait(for: 2)
        p.reconnect()
        try await events.events.wait(for: 3)
        _ = try await p.discoverServices([environment], timeout: .seconds(5)).value
        #expect(changes.items.count == expected)
    }

    @Test("with serviceRediscoveryDelay zero, an indication's removal and addition are one change")
    func serviceChangedAtOnce() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.serviceRediscoveryDelay = .zero
        h.simulator.add(simulatedSensorTag(tag, extraServiceFirst: true))
        let (p, _, _) = try await h.ready(tag)
        let changes = Collector<ServicesChange>()
        p.whenServicesChange().onSuccess(context: .immediate) { changes.append($0) }
        h.simulator.changeServicesWhileConnected(peripheral: tag, to: changed)
        let change = try await changes.wait(for: 1)[0]
        #expect(change.added.map(\.uuid) == [environment])
        #expect(change.removed.map(\.uuid) == [battery])
    }

    @Test("two indications within serviceRediscoveryDelay: the services each one added are all published")
    func twoChangesInARow() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag, extraServiceFirst: true))
        let (p, _, _) = try await h.ready(tag)
        let changes = Collector<ServicesChange>()
        p.whenServicesChange().onSuccess(context: .immediate) { changes.append($0) }
        // The second keeps what the first added (same handles) and adds a thermometer after it.
        let thermometer = BLEUUID("1809")
        let again = changed.service("1809") { $0.characteristic("2A1C", flags: [.read], value: Data([1, 2, 3, 4, 5])) }
        h.simulator.changeServicesWhileConnected(peripheral: tag, to: changed)
        h.simulator.changeServicesWhileConnected(peripheral: tag, to: again)
        var added: Set<BLEUUID> = []
        while !added.isSuperset(of: [environment, thermometer]) {
            added = Set(try await changes.wait(for: changes.items.count + 1).flatMap(\.added).map(\.uuid))
        }
        #expect(p.service(environment) != nil && p.service(thermometer) != nil && p.service(battery) == nil)
    }

    @Test("forgetCachedServices takes the link down and removes the device; a new scan finds the same peripheral and connect discovers afresh")
    func forgetCachedServicesThenRediscover() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag, extraServiceFirst: true))
        let (p, accelerometer, events) = try await h.ready(tag)
        let data = try #require(accelerometer.characteristic(AccelerometerUUIDs.data))
        let ended = Collector<String>()
        data.receiveNotificationUpdates().onComplete(context: .immediate) { r in
            if case .failure(let e) = r { ended.append("\(e)") }
        }
        try await p.forgetCachedServices().value
        #expect(events.events.items == [.connect, .forceDisconnect])
        try await ended.wait(for: 1)
        // The firmware changes while we are away: only a fresh discovery can know.
        h.simulator.replaceServices(peripheral: tag, with: changed)
        #expect(h.manager.peripherals.contains(p))
        #expect(!h.simulator.sync { $0.devicePaths(adapter: 0) }.contains(p.identifier))

        let again = try await h.discover(tag)
        #expect(again === p)
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items.last == .connect)
        _ = try await p.discoverServices([environment], timeout: .seconds(5)).value
        #expect(p.service(battery) == nil)
        #expect(p.service(AccelerometerUUIDs.service) !== accelerometer)
    }
}
