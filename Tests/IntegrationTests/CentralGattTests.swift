// Descriptors, notification re-subscription after a reconnect, write without response, typed values.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central GATT", .serialized, .timeLimit(.minutes(1)))
struct CentralGattTests {
    let tag = "C0:FF:EE:00:00:01"

    @Test("notifications come back after the link drops and the app reconnects; the update stream stays open")
    func resubscribeAfterReconnect() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (p, service, events) = try await h.ready(tag, disconnectRetries: 3)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        let updates = Collector<UInt8>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let b = $0.data?.first { updates.append(b) } }
        _ = try await data.startNotifying().value
        h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([1]))
        try await updates.wait(for: 1)
        h.simulator.dropLink(device: p.identifier)
        try await events.events.wait(for: 2)
        #expect(!data.isNotifying)
        // The simulator publishes NotifyAcquired=true once the socket is handed out again.
        let acquired = Collector<Bool>()
        let subscription = h.client.subscribe(rule: MatchRule(
            interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: try ObjectPath(data.objectPath))) { m in
            guard m.body.count == 3, case .dict(_, _, let entries) = m.body[1] else { return }
            for e in entries where e.key == .string("NotifyAcquired") && e.value.unwrapped == .bool(true) { acquired.append(true) }
        }
        defer { subscription.cancel() }
        try await subscription.established()
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items == [.connect, .disconnect, .connect])
        try await acquired.wait(for: 1)
        #expect(h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([2])) == 1)
        #expect(try await updates.wait(for: 2) == [1, 2])
        #expect(data.isNotifying)
    }

    @Test("descriptors are listed and read; the CCC is present on notifying characteristics")
    func descriptors() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let spec = simulatedSensorTag(tag).service("180F") {
            $0.characteristic("2A19", flags: [.read], value: Data([87])) { c in
                c.descriptor("2901", value: Data("Battery".utf8))
            }
        }
        h.simulator.add(spec)
        let (p, service, _) = try await h.ready(tag)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        #expect(data.descriptors.map(\.uuid).contains("2902"))
        _ = try await p.discoverServices(["180F"]).value
        let battery = try #require(p.service("180F")?.characteristic("2A19"))
        #expect(battery.value(as: UInt8.self) == nil || battery.value(as: UInt8.self) == 87)
        _ = try await battery.read().value
        #expect(battery.value(as: UInt8.self) == 87)
        let userDescription = try #require(battery.descriptor("2901"))
        _ = try await userDescription.read().value
        #expect(userDescription.value == Data("Battery".utf8))
    }

    @Test("write without response reaches the peripheral; operations on a disconnected peripheral fail with notConnected")
    func writeCommandAndNotConnected() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let spec = simulatedSensorTag(tag).service("FFE0") {
            $0.characteristic("FFE1", flags: [.writeWithoutResponse], value: Data())
        }
        h.simulator.add(spec)
        let (p, _, events) = try await h.ready(tag)
        _ = try await p.discoverServices(["FFE0"]).value
        let command = try #require(p.service("FFE0")?.characteristic("FFE1"))
        #expect(command.properties.contains(.writeWithoutResponse))
        _ = try await command.write(data: Data([7, 7]), type: .withoutResponse).value
        _ = try await command.write(data: Data([8]), type: .withoutResponse).value
        // The command is unacknowledged: a read-back through a later request orders it.
        let enabled = try #require(p.service(AccelerometerUUIDs.service)?.characteristic(AccelerometerUUIDs.enabled))
        _ = try await enabled.read().value
        #expect(h.simulator.value(peripheral: tag, characteristic: "FFE1") == Data([8]))
        p.disconnect()
        try await events.events.wait(for: 2)
        do {
            _ = try await enabled.read().value
            Issue.record("read should fail")
        } catch let e as PeripheralError {
            #expect(e.kind == .notConnected)
            #expect(e.operation.contains("ReadValue"))
        }
    }
}
