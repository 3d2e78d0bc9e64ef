// Service discovery races: ServicesResolved before the objects, a stale GATT cache after a
// firmware change, and a link lost during discovery.
// (IntegrationTests/CentralFaultTests.servicesResolvedRace covers one early ServicesResolved.)
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Reliability: GATT cache and discovery", .serialized, .timeLimit(.minutes(1)))
struct GattCacheReliabilityTests {
    @Test("ServicesResolved before the GATT objects, on five reconnections in a row: discovery waits each time")
    func earlyServicesResolvedRepeated() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let a = addresses(1)[0]
        rig.simulator.setServicesResolvedEarly(.milliseconds(150))
        rig.simulator.add(simulatedSensorTag(a))
        let p = try await rig.discover(a)
        let events = rig.connect(p, disconnectRetries: 10)
        for i in 0..<5 {
            if i > 0 { p.reconnect() }
            try await events.events.wait(for: 2 * i + 1)
            let service = try await rig.services(of: p)
            let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
            #expect(try await period.read().value.value(as: UInt8.self) == 100)
            rig.simulator.dropLink(device: p.identifier)
            try await events.events.wait(for: 2 * i + 2)
        }
        #expect(events.events.items == Array(repeating: [ConnectionEvent.connect, .disconnect], count: 5).flatMap { $0 })
    }

    @Test("firmware change: calls on the old characteristic fail with a clear error; rediscovery finds the new layout")
    func staleCacheAfterFirmwareChange() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (a, p, service, events) = try await rig.readyTag(disconnectRetries: 3)
        let oldPeriod = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let oldData = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        _ = try await oldPeriod.read().value
        let oldPeriodPath = oldPeriod.objectPath
        // New firmware: a battery service first (every handle shifts) and a new data UUID.
        let newData: BLEUUID = "F000AA99-0451-4000-B000-000000000000"
        rig.simulator.replaceServices(peripheral: a, with: simulatedSensorTag(a, extraServiceFirst: true, dataUUID: newData))
        try await events.events.wait(for: 2)
        p.reconnect()
        try await events.events.wait(for: 3)
        #expect(events.events.items == [.connect, .disconnect, .connect])
        _ = try await p.discoverServices([AccelerometerUUIDs.service, "180F"], timeout: .seconds(5)).value
        // The old period path is gone: BlueZ answers UnknownObject.
        let read = try await failure(of: oldPeriod.read(timeout: .seconds(2)))
        let readError = try #require(read as? PeripheralError, "old read: \(String(describing: read))")
        #expect(readError.kind == .unknownObject && readError.bluez?.kind == .unknownObject, "\(readError)")
        #expect(readError.path == oldPeriodPath)
        // The old data path now holds the battery level: the write must not land there.
        #expect(oldData.objectPath == devicePath(a) + "/service0001/char0002")
        let write = try await failure(of: oldData.write(data: Data([1]), timeout: .seconds(2)))
        let writeError = try #require(write as? PeripheralError, "old write: \(String(describing: write))")
        #expect(writeError.kind == .notFound, "\(writeError)")
        #expect(writeError.message.contains("discover"), "\(writeError)")
        let notify = try #require(try await failure(of: oldData.startNotifying(timeout: .seconds(2))) as? PeripheralError)
        #expect(notify.kind == .notFound || notify.kind == .notSupported, "\(notify)")
        // Nothing was written to whatever lives at the old paths now.
        #expect(rig.simulator.value(peripheral: a, characteristic: "2A19") == Data([87]))
        #expect(rig.simulator.value(peripheral: a, characteristic: AccelerometerUUIDs.enabled.uuidString) == Data([0]))
        // Rediscovery: new objects, new paths, reads work.
        let fresh = try need(p.service(AccelerometerUUIDs.service), "new accelerometer service")
        _ = try await fresh.discoverCharacteristics([newData, AccelerometerUUIDs.period]).value
        let newPeriod = try need(fresh.characteristic(AccelerometerUUIDs.period), "new period")
        #expect(newPeriod !== oldPeriod)
        #expect(newPeriod.objectPath != oldPeriodPath)
        #expect(try await newPeriod.read().value.value(as: UInt8.self) == 100)
        #expect(fresh.characteristic(AccelerometerUUIDs.data) == nil)
        let battery = try need(p.service("180F")?.characteristic("2A19"), "battery level")
        #expect(try await battery.read().value.value == Data([87]))
    }

    @Test("the link drops while discovery waits: discoverServices fails with disconnected at once, not at its timeout")
    func disconnectDuringDiscovery() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        // On the manual clock, never advanced: no deadline can be what ends the calls.
        let wanted = addresses(3)
        for a in wanted { rig.simulator.add(simulatedSensorTag(a).delays(connection: .milliseconds(2), discovery: .seconds(30))) }
        let peripherals = try await rig.discover(wanted)
        for (i, p) in peripherals.enumerated() {
            let events = rig.connect(p)
            try await events.events.wait(for: 1)
            let discovery = p.discoverServices([AccelerometerUUIDs.service], timeout: .seconds(20))
            let characteristicWait = p.discoverServices(timeout: .seconds(20))
            // Remote drop, local disconnect, terminate: each ends the wait at once.
            switch i {
            case 0: rig.simulator.dropLink(device: p.identifier)
            case 1: p.disconnect()
            default: p.terminate()
            }
            for f in [discovery, characteristicWait] {
                let error = try #require(try await failure(of: f) as? PeripheralError)
                #expect([.disconnected, .notConnected, .terminated].contains(error.kind), "\(error)")
            }
            #expect(rig.clock?.now == .zero)
        }
    }
}
