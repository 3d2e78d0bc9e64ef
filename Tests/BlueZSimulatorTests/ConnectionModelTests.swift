// ConnectionModelTests: Device1 links and remote GATT in the bus-free model.

import Foundation
import Testing
@testable import BlueZSimulator

@Suite("Connection and GATT (model)")
struct ConnectionModelTests {
    let address = "C0:FF:EE:00:00:01"

    func discovered(_ p: SimulatedPeripheral? = nil) throws -> (ModelHarness, String) {
        let h = ModelHarness()
        h.core.addPeripheral(p ?? testPeripheral(address))
        try h.core.startDiscovery(adapter: 0, sender: ":1.5")
        _ = h.take()
        return (h, devicePath(0, address))
    }

    func path(_ h: ModelHarness, _ device: String, _ uuid: String) -> String {
        let u = BluetoothUUID.normalize(uuid)!
        return h.core.store.managedObjects.first { $0.key.hasPrefix(device + "/") &&
            ($0.value["org.bluez.GattCharacteristic1"]?["UUID"] == .string(u) || $0.value["org.bluez.GattDescriptor1"]?["UUID"] == .string(u)) }!.key
    }

    @Test("Connect: reply, Connected=true (bluetoothd signals it after the reply), GATT objects, then ServicesResolved=true")
    func connectOrder() throws {
        let (h, device) = try discovered()
        var replied = false
        h.core.connect(device: device) { r in
            #expect((try? r.get()) != nil)
            replied = true
            h.core.store.sink(.interfacesRemoved(path: "reply", interfaces: []))  // marks the reply in the event log
        }
        h.advance(100)
        #expect(replied)
        let e = h.take()
        #expect(e.first == .interfacesRemoved(path: "reply", interfaces: []))
        #expect(e.dropFirst().first == .propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["Connected": .bool(true)], invalidated: []))
        let service = device + "/service0001"
        #expect(e.added == [service, service + "/char0002", service + "/char0002/desc0004", service + "/char0005",
                            service + "/char0005/desc0007", service + "/char0008"])
        #expect(e.added.first == service)
        #expect(e.added.contains(service + "/char0002/desc0004"))  // the automatic CCC of the notify characteristic
        #expect(e.last == .propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["ServicesResolved": .bool(true)], invalidated: []))
        let chr = h.core.store.properties(service + "/char0002", "org.bluez.GattCharacteristic1")
        #expect(chr?["Flags"] == .strings(["notify"]))
        #expect(chr?["Notifying"] == .bool(false))
        #expect(chr?["MTU"] == .uint16(517))
        #expect(chr?["Service"] == .objectPath(service))
    }

    @Test("Connect on a connected device succeeds at once; twice while connecting is InProgress")
    func connectStates() throws {
        let (h, device) = try discovered()
        var first: Result<Void, BlueZErrorReply>?
        h.core.connect(device: device) { first = $0 }
        var second: Result<Void, BlueZErrorReply>?
        h.core.connect(device: device) { second = $0 }
        #expect(failure(second) == .inProgress)
        h.advance(100)
        #expect((try? first?.get()) != nil)
        var third: Result<Void, BlueZErrorReply>?
        h.core.connect(device: device) { third = $0 }
        #expect((try? third?.get()) != nil)
    }

    @Test("Connect to a device out of range fails with le-connection-abort-by-local")
    func connectOutOfRange() throws {
        let (h, device) = try discovered()
        h.core.setRange(address, adapters: [])
        let r = h.await { h.core.connect(device: device, $0) }
        #expect(failure(r) == .failed("le-connection-abort-by-local"))
        #expect(h.core.store.property(device, "org.bluez.Device1", "Connected") == .bool(false))
    }

    @Test("Disconnect and link loss: ServicesResolved=false, GATT objects removed, Connected=false")
    func disconnectOrder() throws {
        let (h, device) = try discovered()
        try h.connect(device)
        _ = h.take()
        h.core.dropLink(device: device)
        let e = h.take()
        #expect(e.first == .propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["ServicesResolved": .bool(false)], invalidated: []))
        #expect(e.removed.count == 6)
        #expect(e.removed.last == device + "/service0001")
        #expect(e.last == .propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["Connected": .bool(false)], invalidated: []))
    }

    @Test("Disconnect replies after ServicesResolved=false and before the GATT objects go and Connected=false, as bluetoothd")
    func disconnectReplyOrder() throws {
        let (h, device) = try discovered()
        try h.connect(device)
        _ = h.take()
        var atReply: [ObjectEvent]?
        h.core.disconnect(device: device) { r in
            #expect((try? r.get()) != nil)
            atReply = h.events
        }
        let before = try #require(atReply)
        #expect(before == [.propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["ServicesResolved": .bool(false)], invalidated: [])])
        let all = h.take()
        #expect(all.removed.count == 6)
        #expect(all.last == .propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["Connected": .bool(false)], invalidated: []))
    }

    @Test("the ServicesResolved race fault signals ServicesResolved before the objects exist")
    func servicesResolvedEarly() throws {
        let (h, device) = try discovered()
        h.core.servicesResolvedEarly = .milliseconds(30)
        _ = h.await(5) { h.core.connect(device: device, $0) }
        var e = h.take()
        #expect(e.last == .propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["ServicesResolved": .bool(true)], invalidated: []))
        #expect(e.added.isEmpty)
        h.advance(40)
        e = h.take()
        #expect(e.added.count == 6)
    }

    @Test("reads return values, update Value, and map ATT errors as bluetoothd does")
    func readErrors() throws {
        let (h, device) = try discovered()
        try h.connect(device)
        let body = path(h, device, "2A38")
        #expect(try h.await { h.core.readValue(path: body, options: .init(), $0) }?.get() == [1])
        #expect(h.core.store.property(body, "org.bluez.GattCharacteristic1", "Value") == .bytes([1]))
        let notifyOnly = path(h, device, "2A37")
        let r1 = h.await { h.core.readValue(path: notifyOnly, options: .init(), $0) }
        #expect(failure(r1) == .notPermitted("Read not permitted"))
        let r2 = h.await { h.core.readValue(path: body, options: .init(offset: 5), $0) }
        #expect(failure(r2) == .invalidArguments("Invalid offset"))
        #expect(try h.await { h.core.readValue(path: path(h, device, "2901"), options: .init(offset: 2), $0) }?.get() == Array("cation".utf8))
    }

    @Test("writes pick the procedure from type and Flags; errors as bluetoothd replies them")
    func writeErrors() throws {
        let rejecting = testPeripheral(address).firmware(PeripheralFirmware(onWrite: { req, value in
            value.first == 0xFF ? .failure(.application(0x80)) : nil
        }))
        let (h, device) = try discovered(rejecting)
        try h.connect(device)
        let w = path(h, device, "2A39")
        #expect((try? h.await { h.core.writeValue(path: w, value: [7], options: .init(), $0) }?.get()) != nil)
        #expect(h.core.peripheralValue(address, characteristic: "2A39") == Data([7]))
        func error(_ p: String, _ v: [UInt8], _ o: SimulatorCore.ValueOptions) -> BlueZErrorReply? {
            failure(h.await { h.core.writeValue(path: p, value: v, options: o, $0) })
        }
        #expect(error(w, [0xFF], .init()) == .failed("Operation failed with ATT error: 0x80"))
        #expect(error(w, Array(repeating: 1, count: 513), .init()) == .invalidArguments("Invalid Length"))
        #expect(error(path(h, device, "2A38"), [1], .init()) == .notSupported)
        #expect(error(path(h, device, "2A38"), [1], .init(type: "request")) == .notPermitted("Write not permitted"))
        #expect(error(path(h, device, "2902"), [1, 0], .init()) == .notPermitted("Write not permitted"))
        h.core.dropLink(device: device)
        #expect(error(w, [1], .init()) == .doesNotExist)
    }

    @Test("StartNotify: per client, twice is fine, Value changes per notification; StopNotify without a session fails")
    func notifySessions() throws {
        let (h, device) = try discovered()
        try h.connect(device)
        let hr = path(h, device, "2A37")
        #expect(throws: BlueZErrorReply.notSupported) { try h.core.startNotify(path: path(h, device, "2A38"), sender: ":1.5") }
        #expect(throws: BlueZErrorReply.failed("No notify session started")) { try h.core.stopNotify(path: hr, sender: ":1.5") }
        _ = h.take()
        try h.core.startNotify(path: hr, sender: ":1.5")
        try h.core.startNotify(path: hr, sender: ":1.5")
        try h.core.startNotify(path: hr, sender: ":1.6")
        #expect(h.take().changes(hr, "org.bluez.GattCharacteristic1") == [["Notifying": .bool(true)]])
        #expect(h.core.notify(peripheral: address, characteristic: "2A37", value: Data([0, 70])) == 1)
        #expect(h.core.notify(peripheral: address, characteristic: "2A37", value: Data([0, 70])) == 1)
        #expect(h.take().changes(hr, "org.bluez.GattCharacteristic1") == [["Value": .bytes([0, 70])], ["Value": .bytes([0, 70])]])
        try h.core.stopNotify(path: hr, sender: ":1.5")
        #expect(h.take().isEmpty)
        h.core.clientVanished(":1.6")
        #expect(h.take().changes(hr, "org.bluez.GattCharacteristic1") == [["Notifying": .bool(false)]])
        #expect(h.core.notify(peripheral: address, characteristic: "2A37", value: Data([1])) == 0)
    }

    @Test("power off disconnects devices in BlueZ order and ends discovery")
    func powerOff() throws {
        let (h, device) = try discovered()
        try h.connect(device)
        _ = h.take()
        h.core.setPowered(0, false)
        let e = h.take()
        #expect(e.first == .propertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["ServicesResolved": .bool(false)], invalidated: []))
        #expect(e.changes(device).contains(["Connected": .bool(false)]))
        #expect(e.changes(hci0, "org.bluez.Adapter1").contains { $0["Powered"] == .bool(false) })
        #expect(e.changes(hci0, "org.bluez.Adapter1").contains { $0["Discovering"] == .bool(false) })
        let r = h.await { h.core.connect(device: device, $0) }
        #expect(failure(r) == .notReady)
    }

    @Test("removing an adapter removes its devices' objects, then the adapter")
    func removeAdapter() throws {
        let (h, device) = try discovered()
        try h.connect(device)
        _ = h.take()
        h.core.removeAdapter(0)
        let removed = h.take().removed
        #expect(removed.last == hci0)
        #expect(removed.contains(device))
        #expect(h.core.addAdapter() == 0)
        #expect(h.take().added == [hci0])
    }
}
