// Passive scanning through AdvertisementMonitorManager1 (bluetoothd --experimental).
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Advertisement monitors", .serialized, .timeLimit(.minutes(1)))
struct MonitorTests {
    static let company: UInt16 = 0xFFFF
    static let pattern = MonitorPattern.manufacturerData(companyID: company, prefix: [0xB1, 0xCA])
    /// Any signal counts; found after 1 s, lost 1 s after the last advertisement.
    static let rssi = MonitorRSSI(highThreshold: -126, highTimeout: 1, lowThreshold: -127, lowTimeout: 1)

    @Test("without --experimental: the stream fails at once with monitoringUnavailable saying how to enable it, and no scan starts")
    func experimentalOff() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let failures = Collector<String>()
        let codes = Collector<BlueCapError.Kind>()
        h.manager.startMonitoring(patterns: [Self.pattern]).onFailure(context: .immediate) { e in
            failures.append("\(e)")
            if let e = e as? BlueCapError { codes.append(e.kind) }
        }
        try await failures.wait(for: 1)
        #expect(codes.items == [.monitoringUnavailable])
        let text = failures.items[0]
        #expect(text.contains("AdvertisementMonitorManager1 is missing") && text.contains("--experimental"), "\(text)")
        #expect(text.contains("Experimental = true") && text.contains("/etc/bluetooth/main.conf"), "\(text)")
        #expect(!h.manager.isScanning && !h.manager.isMonitoring)
        #expect(h.simulator.sync { $0.discoveryClients(adapter: 0).isEmpty })
    }

    @Test("without --experimental and with fallbackToActiveScanning: an active scan finds the device by the pattern")
    func fallback() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let found = Collector<String>()
        h.manager.startMonitoring(patterns: [Self.pattern], fallbackToActiveScanning: true)
            .onSuccess(context: .immediate) { if case .found(let p) = $0 { found.append(p.address) } }
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:41").manufacturerData(id: Self.company, data: Data([0xB1, 0xCA, 7])))
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:42").manufacturerData(id: Self.company, data: Data([0x00])))
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:43").manufacturerData(id: Self.company, data: Data([0xB1, 0xCA])))
        try await found.wait(for: 2)
        #expect(found.items == ["C0:FF:EE:00:00:41", "C0:FF:EE:00:00:43"])
        #expect(h.manager.isScanning)
        h.manager.stopMonitoring()
        try await waitUntil("scan stopped") { !h.manager.isScanning }
    }

    @Test("a manufacturer-data pattern finds the advertiser without any discovery, and reports it lost once it stops")
    func foundAndLost() async throws {
        let h = try await CentralRig.start(experimental: true)
        defer { h.stop() }
        let events = Collector<String>()
        h.manager.startMonitoring(patterns: [Self.pattern], rssi: Self.rssi)
            .onSuccess(context: .immediate) { events.append("\($0)") }
        try await waitUntil("registered") { h.simulator.sync { $0.monitorRegistrations(adapter: 0).count == 1 } }
        try await waitUntil("activated") { h.manager.isMonitoring }
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:51").manufacturerData(id: Self.company, data: Data([0xB1, 0xCA, 1])))
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:52").name("other").manufacturerData(id: 0x0059, data: Data([0xB1, 0xCA])))
        try await events.wait(for: 1)
        #expect(events.items == ["found /org/bluez/hci0/dev_C0_FF_EE_00_00_51"])
        // Passive: nobody discovers.
        #expect(h.simulator.sync { $0.discoveryClients(adapter: 0).isEmpty })
        h.simulator.removePeripheral("C0:FF:EE:00:00:51")
        try await events.wait(for: 2)
        #expect(events.items.last == "lost /org/bluez/hci0/dev_C0_FF_EE_00_00_51")
        h.manager.stopMonitoring()
        try await waitUntil("unregistered") { h.simulator.sync { $0.monitorRegistrations(adapter: 0).isEmpty } }
        #expect(events.items.count == 2)
    }

    @Test("without RSSI settings every matching advertisement is a found and nothing is ever lost")
    func noRSSI() async throws {
        let h = try await CentralRig.start(experimental: true)
        defer { h.stop() }
        let events = Collector<String>()
        h.manager.startMonitoring(patterns: [.serviceUUID(AccelerometerUUIDs.service)])
            .onSuccess(context: .immediate) { events.append("\($0)") }
        try await waitUntil("activated") { h.manager.isMonitoring }
        let tag = "C0:FF:EE:00:00:61"
        h.simulator.add(simulatedSensorTag(tag))
        try await events.wait(for: 1)
        h.simulator.updatePeripheral(tag) { $0.rssi = -70 }
        try await events.wait(for: 2)
        h.simulator.removePeripheral(tag)
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:62"))
        try await events.wait(for: 3)
        #expect(events.items.allSatisfy { $0.hasPrefix("found") }, "\(events.items)")
    }

    @Test("a pattern on a BlueZ advertiser's local name never matches (it is in the scan response); its manufacturer data does")
    func localNameIsInScanResponse() async throws {
        let h = try await CentralRig.start(adapters: 2, experimental: true)
        defer { h.stop() }
        let peripheral = PeripheralManager(adapter: "hci1", session: h.bus.session())
        for try await state in peripheral.whenStateChanges().values where state == .poweredOn { break }
        let byName = Collector<String>()
        let byData = Collector<String>()
        h.manager.startMonitoring(patterns: [MonitorPattern(adType: 0x09, bytes: Array("bluecap-mon".utf8))])
            .onSuccess(context: .immediate) { byName.append("\($0)") }
        try await waitUntil("activated") { h.manager.isMonitoring }
        try await peripheral.startAdvertising("bluecap-mon", manufacturerData: [Self.company: Data([0xB1, 0xCA])]).value
        let second = CentralManager(session: h.bus.session())
        try await second.whenPoweredOn(timeout: .seconds(5)).value
        second.startMonitoring(patterns: [Self.pattern]).onSuccess(context: .immediate) { byData.append("\($0)") }
        try await byData.wait(for: 1)
        #expect(byData.items[0].hasPrefix("found /org/bluez/hci0/dev_"))
        #expect(byName.items.isEmpty)
        second.stopMonitoring()
        _ = try await peripheral.stopAdvertising().value
    }

    @Test("the monitor ends with adapterUnavailable when its adapter is unplugged")
    func adapterUnplugged() async throws {
        let h = try await CentralRig.start(experimental: true)
        defer { h.stop() }
        let codes = Collector<BlueCapError.Kind>()
        h.manager.startMonitoring(patterns: [Self.pattern]).onFailure(context: .immediate) { e in
            codes.append((e as? BlueCapError)?.kind ?? .other("\(e)"))
        }
        try await waitUntil("activated") { h.manager.isMonitoring }
        h.simulator.removeAdapter(0)
        try await codes.wait(for: 1)
        #expect(codes.items == [.adapterUnavailable])
    }
}
