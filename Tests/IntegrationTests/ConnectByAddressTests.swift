// CentralManager.connect(address:addressType:timeout:) through the public API, against simulated
// bluetoothd releases with and without --experimental (Adapter1.ConnectDevice or a discovery).
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Connect by address", .serialized, .timeLimit(.minutes(2)))
struct ConnectByAddressTests {
    let tag = "C0:FF:EE:00:00:01"
    var devicePath: String { "/org/bluez/hci0/dev_C0_FF_EE_00_00_01" }
    static let experimental: [BlueZProfile] = [.bluez5_55.experimental(true), .bluez5_66.experimental(true), .bluez5_82.experimental(true)]
    static let plain: [BlueZProfile] = [.bluez5_55, .bluez5_66, .bluez5_82]

    @Test("with bluetoothd -E, a sensor never scanned is connected by Adapter1.ConnectDevice, with no discovery; its services are found",
          arguments: experimental)
    func connectDevicePath(profile: BlueZProfile) async throws {
        let h = try await AddressRig.start(profile)
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        // A discovery would fail: the connection must not need one.
        h.simulator.inject(MethodFault("org.bluez.Adapter1.StartDiscovery", action: .error(.failed("no discovery expected"))))
        #expect(h.devices.isEmpty)
        let p = try await h.manager.connect(address: tag.lowercased(), timeout: .seconds(10)).value
        #expect(p.address == tag && p.identifier == devicePath)
        #expect(p.isConnected)
        #expect(h.discoveryClients == 0)
        _ = try await p.discoverServices().value
        #expect(p.service(AccelerometerUUIDs.service) != nil)
    }

    @Test("without -E, a discovery (transport le, the address as pattern) runs until the address is heard, then stops; the device connects",
          arguments: plain)
    func discoveryPath(profile: BlueZProfile) async throws {
        let h = try await AddressRig.start(profile)
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        // Another sensor in range: the pattern keeps it out of bluetoothd's reports.
        h.simulator.add(simulatedSensorTag("C0:FF:EE:00:00:02"))
        let p = try await h.manager.connect(address: tag, timeout: .seconds(10)).value
        #expect(p.address == tag && p.isConnected)
        try await waitUntil("our discovery ended") { h.discoveryClients == 0 }
        #expect(h.devices == [devicePath])
        _ = try await p.discoverServices().value
        #expect(p.service(AccelerometerUUIDs.service) != nil)
    }

    @Test("a random address is connected with addressType .random; asked as public it is never reached and the error says to check the type")
    func randomAddress() async throws {
        let h = try await AddressRig.start(.bluez5_82.experimental(true))
        defer { h.stop() }
        let random = "D1:FF:EE:00:00:05"
        h.simulator.add(SimulatedPeripheral.spec(address: random).addressType(.random).advertising(uuids: ["180F"]))
        let error = await #expect(throws: BlueCapError.self) {
            try await h.manager.connect(address: random, addressType: .public, timeout: .milliseconds(600)).value
        }
        #expect(error?.kind == .timeout && "\(error.map { "\($0)" } ?? "")".contains("address type"))
        let p = try await h.manager.connect(address: random, addressType: .random, timeout: .seconds(10)).value
        #expect(p.address == random && p.isConnected)
    }

    @Test("a device BlueZ already knows is connected directly with Device1.Connect (5.66 and 5.82, with -E)",
          arguments: [BlueZProfile.bluez5_66.experimental(true), .bluez5_82.experimental(true)])
    func knownDevice(profile: BlueZProfile) async throws {
        let h = try await AddressRig.start(profile)
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let found = try await h.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).first().value
        h.manager.stopScanning()
        h.simulator.inject(MethodFault("org.bluez.Adapter1.ConnectDevice", action: .error(.failed("ConnectDevice not expected"))))
        let p = try await h.manager.connect(address: tag, timeout: .seconds(10)).value
        #expect(p === found && p.isConnected)
    }

    @Test("two connects to the same address at once: one device, both get the same connected peripheral", arguments: [false, true])
    func concurrentConnects(experimental: Bool) async throws {
        let h = try await AddressRig.start(BlueZProfile.bluez5_66.experimental(experimental))
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        let first = h.manager.connect(address: tag, timeout: .seconds(10))
        let second = h.manager.connect(address: tag.lowercased(), timeout: .seconds(10))
        let (a, b) = (try await first.value, try await second.value)
        #expect(a === b && a.isConnected)
        #expect(h.devices == [devicePath])
        #expect(h.manager.peripherals.filter { $0.address == tag }.count == 1)
    }

    @Test("an invalid address fails with .invalidAddress and sends nothing", arguments: ["C0:FF:EE:00:00", "C0:FF:EE:00:00:0G", "C0-FF-EE-00-00-01", ""])
    func invalidAddress(address: String) async throws {
        let h = try await AddressRig.start(.bluez5_66.experimental(true))
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        // Consumed by the first ConnectDevice that reaches the simulator.
        h.simulator.inject(MethodFault("org.bluez.Adapter1.ConnectDevice", action: .error(.failed("first call")), count: 1))
        await #expect {
            try await h.manager.connect(address: address).value
        } throws: { ($0 as? BlueCapError)?.kind == .invalidAddress && "\($0)".contains("C0:FF:EE:00:00:01") }
        // Had the invalid call reached bluetoothd, the fault would be gone and this would connect.
        await #expect(throws: BlueCapError.self) { try await h.manager.connect(address: tag, timeout: .milliseconds(300)).value }
        #expect(h.discoveryClients == 0)
    }

    @Test("the adapter powered off: .notPoweredOn at once; powered off while searching: the search fails with it and discovery ends")
    func poweredOff() async throws {
        let h = try await AddressRig.start(.bluez5_66)
        defer { h.stop() }
        let searching = h.manager.connect(address: tag, timeout: .seconds(10))
        try await waitUntil("the discovery for the address started") { h.discoveryClients == 1 }
        h.simulator.setPowered(adapter: 0, false)
        await #expect { try await searching.value } throws: { ($0 as? BlueCapError)?.kind == .notPoweredOn }
        try await waitUntil("the manager saw the power off") { h.manager.state == .poweredOff }
        await #expect { try await h.manager.connect(address: tag).value } throws: { ($0 as? BlueCapError)?.kind == .notPoweredOn }
        #expect(h.discoveryClients == 0)
    }

    @Test("an address never heard: .timeout naming the address and the adapter, saying whether ConnectDevice was available and how to enable it; discovery stopped",
          arguments: [false, true])
    func notHeard(experimental: Bool) async throws {
        let h = try await AddressRig.start(BlueZProfile.bluez5_66.experimental(experimental))
        defer { h.stop() }
        let error = await #expect(throws: BlueCapError.self) {
            try await h.manager.connect(address: tag, timeout: .milliseconds(800)).value
        }
        #expect(error?.kind == .timeout && error?.timeout == .milliseconds(800))
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(tag) && text.contains("hci0"), "\(text)")
        if experimental {
            #expect(text.contains("ConnectDevice was available"), "\(text)")
        } else {
            #expect(text.contains("ConnectDevice is not available") && text.contains("-E") && text.contains("Experimental = true"), "\(text)")
        }
        try await waitUntil("no discovery left") { h.discoveryClients == 0 }
        #expect(h.devices.isEmpty)
    }

    @Test("abandoning the future (a cancelled token) stops the discovery it started; a later connect starts afresh")
    func abandonStopsDiscovery() async throws {
        let h = try await AddressRig.start(.bluez5_82)
        defer { h.stop() }
        let token = CancelToken()
        let result = Collector<String>()
        h.manager.connect(address: tag, timeout: .seconds(10)).onComplete(cancelToken: token) { result.append("\($0)") }
        try await waitUntil("the discovery for the address started") { h.discoveryClients == 1 }
        token.cancel()
        try await waitUntil("the discovery ended once nobody waits") { h.discoveryClients == 0 }
        #expect(result.items.isEmpty)
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.manager.connect(address: tag, timeout: .seconds(10)).value
        #expect(p.isConnected)
    }

    @Test("abandoned while StartDiscovery is under way: bluetoothd's discovery session is ended anyway")
    func abandonDuringStart() async throws {
        let h = try await AddressRig.start(.bluez5_66)
        defer { h.stop() }
        // StartDiscovery is handled 300 ms late: our StopDiscovery (from the abandonment) reaches
        // bluetoothd before it, fails, and the late start would leave discovery on.
        h.simulator.inject(MethodFault("org.bluez.Adapter1.StartDiscovery", action: .delay(.milliseconds(300)), count: 1))
        let token = CancelToken()
        h.manager.connect(address: tag, timeout: .seconds(10)).onComplete(cancelToken: token) { _ in }
        try await waitUntil("the search's filter reached bluetoothd") { h.discoveryClients == 1 }
        token.cancel()
        try await waitUntil("no discovery session and no filter left") {
            h.discoveryClients == 0 && h.simulator.sync { $0.store.property("/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") } == .bool(false)
        }
    }

    @Test("an app's own scan goes on through a connect by address and after it; the discovery ends only with the scan")
    func scanNotDisturbed() async throws {
        let h = try await AddressRig.start(.bluez5_66)
        defer { h.stop() }
        // The app scans for heart-rate straps; the sensor does not advertise that service.
        let strap = SimulatedPeripheral.spec(address: "C0:FF:EE:00:00:0A").name("Strap").advertising(uuids: ["180D"])
        let straps = Collector<String>()
        let scan = h.manager.startScanning(forServiceUUIDs: [BLEUUID(string: "180D")!])
        scan.onSuccess { straps.append($0.address) }
        try await waitUntil("the scan runs") { h.discoveryClients == 1 }
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await h.manager.connect(address: tag, timeout: .seconds(10)).value
        #expect(p.isConnected && h.manager.isScanning)
        #expect(h.discoveryClients == 1)
        // The scan still reports what it looks for, and only that.
        h.simulator.add(strap)
        _ = try await straps.wait(for: 1)
        #expect(straps.items == ["C0:FF:EE:00:00:0A"])
        h.manager.stopScanning()
        try await waitUntil("the discovery ended with the scan") { h.discoveryClients == 0 }
    }

    @Test("the scan ending first leaves the search running until the address is heard")
    func scanEndsFirst() async throws {
        let h = try await AddressRig.start(.bluez5_66)
        defer { h.stop() }
        _ = h.manager.startScanning(forServiceUUIDs: [BLEUUID(string: "180D")!])
        try await waitUntil("the scan runs") { h.discoveryClients == 1 }
        let connecting = h.manager.connect(address: tag, timeout: .seconds(10))
        h.manager.stopScanning()
        h.simulator.add(simulatedSensorTag(tag))
        let p = try await connecting.value
        #expect(p.isConnected)
        try await waitUntil("the discovery ended") { h.discoveryClients == 0 }
    }
}
