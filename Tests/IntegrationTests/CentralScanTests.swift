// Scan filters (re-checked on our side), duplicates, timeout, and the discovery watchdog.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central scanning", .serialized, .timeLimit(.minutes(1)))
struct CentralScanTests {
    @Test("UUID and RSSI filters are applied even when another client's scan reports everything")
    func clientSideFiltering() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        // Another client scanning without a filter: bluetoothd merges filters and reports all.
        let other = try h.bus.connect()
        _ = try await other.call(destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                                 member: "StartDiscovery", timeout: .seconds(5))
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:01", rssi: -40))
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:02", rssi: -90))
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:03").name("Battery").rssi(-30).advertising(uuids: ["180F"]))
        let found = Collector<String>()
        h.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service], options: ScanOptions(rssiThreshold: -60))
            .onSuccess(context: .immediate) { found.append($0.address) }
        try await found.wait(for: 1)
        // Let the battery device's and the weak tag's reports go by: a third, matching device
        // arriving later proves the stream kept running and the others were dropped.
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:04", rssi: -45))
        try await found.wait(for: 2)
        #expect(found.items == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:04"])
    }

    @Test("without allowDuplicates a peripheral is yielded once; with it, on each advertisement update")
    func duplicates() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let tag = "C0:FF:EE:00:00:01"
        h.simulator.add(simulatedSensorTag(tag).manufacturerData(id: 0x000D, data: Data([1])))
        let once = Collector<Int16?>()
        h.manager.startScanning().onSuccess(context: .immediate) { once.append($0.rssi) }
        try await once.wait(for: 1)
        h.simulator.updatePeripheral(tag) { $0.rssi = -80 }
        h.simulator.updatePeripheral(tag) { $0.manufacturerData[0x000D] = Data([2]) }
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:02"))  // a later sighting marks the end of the updates
        try await once.wait(for: 2)
        #expect(once.items.count == 2)
        h.manager.stopScanning()

        let every = Collector<Data?>()
        h.manager.startScanning(options: ScanOptions(allowDuplicates: true)).onSuccess(context: .immediate) { p in
            if p.address == tag { every.append(p.advertisement.manufacturerData[0x000D]) }
        }
        try await every.wait(for: 1)
        h.simulator.updatePeripheral(tag) { $0.manufacturerData[0x000D] = Data([3]) }
        h.simulator.updatePeripheral(tag) { $0.manufacturerData[0x000D] = Data([4]) }
        let items = try await every.wait(for: 3)
        #expect(items.last == Data([4]))
    }

    @Test("a scan with a timeout stops discovery and finishes its stream")
    func scanTimeout() async throws {
        let h = try await CentralRig.start(manualClock: true)
        defer { h.stop() }
        let finished = Collector<Bool>()
        let stream = h.manager.startScanning(timeout: .milliseconds(200))
        stream.onFinish(context: .immediate) { finished.append(true) }
        try await waitUntil("discovering") { h.simulator.sync { $0.discoveryClients(adapter: 0).values.contains { $0.active } } }
        await h.advance(by: .milliseconds(199))
        #expect(finished.items.isEmpty && h.manager.isScanning)
        await h.advance(by: .milliseconds(1))
        try await finished.wait(for: 1)
        #expect(!h.manager.isScanning)
        let clients = h.simulator.sync { $0.discoveryClients(adapter: 0) }
        #expect(clients.isEmpty)
    }

    @Test("a scan whose timeout passes before bluetoothd answered SetDiscoveryFilter never starts discovery")
    func scanTimeoutBeforeTheFilterReply() async throws {
        let h = try await CentralRig.start(manualClock: true)
        defer { h.stop() }
        let finished = Collector<Bool>()
        h.manager.startScanning(timeout: .milliseconds(200)).onFinish(context: .immediate) { finished.append(true) }
        await h.advance(by: .milliseconds(200))
        try await finished.wait(for: 1)
        #expect(!h.manager.isScanning)
        // The filter stays registered, as bluetoothd keeps a client's filter after a StopDiscovery
        // that found no discovery; what matters is that no discovery runs for us.
        let clients = h.simulator.sync { $0.discoveryClients(adapter: 0) }
        #expect(!clients.values.contains { $0.active }, "\(clients)")
    }

    @Test("StartDiscovery answered InProgress while bluetoothd is busy (5.66 after a restart) is asked again: the scan starts and finds")
    func startDiscoveryBusy() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:01"))
        h.simulator.inject(MethodFault("org.bluez.Adapter1.StartDiscovery",
                                       action: .error(.bluez("InProgress", "Operation already in progress")), count: 2))
        let found = Collector<String>()
        h.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).onSuccess(context: .immediate) { found.append($0.address) }
        #expect(try await found.wait(for: 1, timeout: .seconds(5)) == ["C0:FF:EE:00:00:01"])
        #expect(h.simulator.sync { $0.store.property("/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") } == .bool(true))
        h.manager.stopScanning()
    }

    @Test("StartDiscovery answering InProgress for good while the adapter is not discovering ends the scan naming the cause and the fix")
    func startDiscoveryStuck() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.inject(MethodFault("org.bluez.Adapter1.StartDiscovery",
                                       action: .error(.bluez("InProgress", "Operation already in progress"))))
        let ended = Collector<String>()
        h.manager.startScanning().onFailure(context: .immediate) { ended.append("\($0)") }
        let error = try await ended.wait(for: 1, timeout: .seconds(10))[0]
        #expect(error.contains("6 times and the adapter is not discovering"), "\(error)")
        #expect(error.contains("bluetoothctl power off; bluetoothctl power on"), "\(error)")
        #expect(!h.manager.isScanning)
    }

    @Test("when BlueZ stops discovery behind our back, the watchdog starts it again")
    func watchdog() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let found = Collector<String>()
        h.manager.startScanning().onSuccess(context: .immediate) { found.append($0.address) }
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:01"))
        try await found.wait(for: 1)
        let me = h.client.uniqueName
        h.simulator.sync { core in try? core.stopDiscovery(adapter: 0, sender: me) }
        // Discovering went false; the next device is only reported if discovery was restarted.
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:02"))
        let items = try await found.wait(for: 2)
        #expect(items.contains("C0:FF:EE:00:00:02"))
        #expect(h.manager.isScanning)
        #expect(h.simulator.sync { $0.discoveryClients(adapter: 0)[me]?.active } == true)
    }

    @Test("with allowDuplicates every RSSI update is reported, and a discovery restart does not report a known device again")
    func duplicatesAcrossARestart() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let a = "C0:FF:EE:00:00:01", b = "C0:FF:EE:00:00:02", c = "C0:FF:EE:00:00:03"
        h.simulator.add(simulatedSensorTag(a, rssi: -50))
        let found = Collector<String>()
        h.manager.startScanning(options: ScanOptions(allowDuplicates: true)).onSuccess(context: .immediate) { found.append($0.address) }
        try await found.wait(for: 1)
        // bluetoothd reports RSSI moves of 8 dBm or more.
        h.simulator.updatePeripheral(a) { $0.rssi = -80 }
        h.simulator.updatePeripheral(a) { $0.rssi = -50 }
        try await found.wait(for: 3)
        let me = h.client.uniqueName
        h.simulator.sync { core in try? core.stopDiscovery(adapter: 0, sender: me) }
        // The watchdog starts discovery again and looks at every known device: b is new, a was
        // reported already (it is reported once more as bluetoothd hears it in the new
        // discovery, as bluetoothd does: its RSSI was cleared when discovery stopped).
        h.simulator.add(simulatedSensorTag(b))
        try await found.wait(until: { $0.contains(b) })
        h.simulator.updatePeripheral(a) { $0.rssi = -80 }
        h.simulator.add(simulatedSensorTag(c))
        let items = try await found.wait(until: { $0.contains(c) })
        #expect(items.filter { $0 == a }.count == 5, "\(items)")
        #expect(items.filter { $0 == b }.count == 1 && items.last == c, "\(items)")
    }
}
