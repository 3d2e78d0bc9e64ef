// The seed's central flow on a simulated SensorTag, notifications both ways, typed values.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central flow", .serialized, .timeLimit(.minutes(1)))
struct CentralFlowTests {
    let tag = "C0:FF:EE:00:00:01"

    @Test("state, scan with a UUID filter, connect, discover, read and enable, notify N updates through AcquireNotify")
    func seedFlow() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        #expect(h.manager.state == .poweredOn)
        #expect(h.manager.adapter == "hci0")
        h.simulator.add(simulatedSensorTag(tag))
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:99").name("Other").advertising(uuids: ["180F"]))
        let found = Collector<Peripheral>()
        h.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { found.append($0) }
        let p = try await found.wait(for: 1)[0]
        #expect(p.address == tag)
        #expect(p.name == "SensorTag")
        #expect(p.rssi == -50)
        #expect(p.advertisement.serviceUUIDs.contains(AccelerometerUUIDs.service))
        #expect(h.manager.isScanning)
        h.manager.stopScanning()
        #expect(!h.manager.isScanning)
        #expect(found.items.allSatisfy { $0.address == tag })

        let events = h.connect(p)
        try await events.events.wait(for: 1)
        #expect(events.events.items == [.connect])
        _ = try await p.discoverServices([AccelerometerUUIDs.service]).value
        let service = try #require(p.service(AccelerometerUUIDs.service))
        _ = try await service.discoverCharacteristics().value
        let enabled = try #require(service.characteristic(AccelerometerUUIDs.enabled))
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        #expect(data.properties.contains(.notify))

        _ = try await enabled.read().value
        #expect(enabled.value(as: UInt8.self) == 0)
        _ = try await enabled.write(UInt8(1)).value
        #expect(h.simulator.value(peripheral: tag, characteristic: AccelerometerUUIDs.enabled.uuidString) == Data([1]))

        let updates = Collector<Data>()
        data.receiveNotificationUpdates(capacity: 50).onSuccess(context: .immediate) { if let d = $0.data { updates.append(d) } }
        _ = try await data.startNotifying().value
        #expect(data.notificationTransport == .acquiredSocket)
        #expect(data.mtu == 517)
        let n = 25
        for i in 0..<n { h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([UInt8(i), 1, 2])) }
        let got = try await updates.wait(for: n)
        #expect(got.map { $0[0] } == (0..<n).map(UInt8.init))
        _ = try await data.stopNotifying().value
        #expect(!data.isNotifying)
    }

    @Test("the async forms: for-await over scan, connection and notification streams")
    func asyncForms() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (p, service, _) = try await withDeadline(.seconds(10)) { () async throws -> (Peripheral, Service, ConnectionEvents) in
            var found: Peripheral?
            for try await candidate in h.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).values {
                found = candidate
                break
            }
            h.manager.stopScanning()
            let p = try need(found)
            for try await event in p.connect().values {
                #expect(event.connectionEvent == .connect)
                break
            }
            _ = try await p.discoverServices().value
            let s = try need(p.service(AccelerometerUUIDs.service))
            return (p, s, ConnectionEvents())
        }
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        _ = try await data.startNotifying().value
        // startNotifying opened the update stream, which keeps what arrives before we iterate.
        for i in 1...3 { h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([UInt8(i)])) }
        let values = try await withDeadline(.seconds(5)) {
            var values: [UInt8] = []
            for try await update in data.receiveNotificationUpdates().values {
                values.append(update.data?.first ?? 0)
                if values.count == 3 { break }
            }
            return values
        }
        #expect(values == [1, 2, 3])
        #expect(p.isConnected)
    }

    @Test("StartNotify fallback when AcquireNotify is refused, and for indicate-only characteristics")
    func startNotifyFallback() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        h.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.AcquireNotify",
                                       action: .error(.bluez("NotSupported", "Operation is not supported"))))
        let (_, service, _) = try await h.ready(tag)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        let updates = Collector<Data>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let d = $0.data { updates.append(d) } }
        _ = try await data.startNotifying().value
        #expect(data.notificationTransport == .propertiesChanged)
        for i in 0..<5 { h.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([UInt8(i)])) }
        #expect(try await updates.wait(for: 5).map { $0[0] } == [0, 1, 2, 3, 4])
        _ = try await data.stopNotifying().value

        let other = "C0:FF:EE:00:00:02"
        h.simulator.clearFaults()
        h.simulator.add(simulatedSensorTag(other, dataFlags: [.read, .indicate]))
        let (_, s2, _) = try await h.ready(other)
        let indicated = try #require(s2.characteristic(AccelerometerUUIDs.data))
        let got = Collector<Data>()
        indicated.receiveNotificationUpdates().onSuccess(context: .immediate) { if let d = $0.data { got.append(d) } }
        _ = try await indicated.startNotifying().value
        #expect(indicated.notificationTransport == .propertiesChanged)
        h.simulator.notify(peripheral: other, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([9]))
        #expect(try await got.wait(for: 1) == [Data([9])])
    }

    @Test("startNotifying on a characteristic without notify or indicate fails with notSupported")
    func notifyUnsupported() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await h.ready(tag)
        let enabled = try #require(service.characteristic(AccelerometerUUIDs.enabled))
        await #expect(throws: PeripheralError.self) { _ = try await enabled.startNotifying().value }
        do { _ = try await enabled.startNotifying().value } catch let e as PeripheralError { #expect(e.kind == .notSupported) }
    }
}
