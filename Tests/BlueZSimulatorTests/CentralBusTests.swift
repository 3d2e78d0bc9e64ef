// CentralBusTests: the central role over raw D-Bus against the simulator on a private bus.

import BlueZSimulator
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Central role over D-Bus", .serialized, .timeLimit(.minutes(1)))
struct CentralBusTests {
    let hci0 = "/org/bluez/hci0"
    let address = "C0:FF:EE:00:00:01"

    @Test("discovery with a UUID filter reports matching devices and RSSI changes as PropertiesChanged")
    func discoveryWithFilter() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        h.simulator.add(testPeripheral(address))
        h.simulator.add(.spec(address: "C0:FF:EE:00:00:02").name("Battery").advertising(uuids: ["180F"]))
        try await h.call(hci0, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties([
            "UUIDs": .array(element: .string, [.string("180d")]), "RSSI": .int16(-100), "Transport": .string("le"),
        ])])
        try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery")
        let device = BlueZPath.device(adapter: 0, address: address)
        let i = try await h.waitSignal("device") { isAdded($0, device) }
        #expect(try await h.get(hci0, "org.bluez.Adapter1", "Discovering") == .bool(true))
        #expect(try await h.get(device, "org.bluez.Device1", "RSSI") == .int16(-50))
        #expect(h.signals.items[i].signature == "oa{sa{sv}}")
        h.simulator.updatePeripheral(address) { $0.rssi = -51 }
        try await h.waitSignal("RSSI") { isChanged($0, device, "RSSI", .int16(-51)) }
        let objects = try await h.managedObjects()
        #expect(objects[BlueZPath.device(adapter: 0, address: "C0:FF:EE:00:00:02")] == nil)
        let filters = try await h.call(hci0, "org.bluez.Adapter1", "GetDiscoveryFilters")
        #expect(filters.signature == "as")
        #expect(await h.error(hci0, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties(["Bogus": .bool(true)])])?.name
                == "org.bluez.Error.InvalidArguments")
    }

    @Test("discovery sessions are per client; a client leaving the bus loses its session")
    func perClientSessions() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let other = try h.bus.connect()
        try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery", on: other)
        try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery")
        #expect(await h.error(hci0, "org.bluez.Adapter1", "StartDiscovery")?.name == "org.bluez.Error.InProgress")
        try await h.call(hci0, "org.bluez.Adapter1", "StopDiscovery")
        let stopAgain = await h.error(hci0, "org.bluez.Adapter1", "StopDiscovery")
        #expect(stopAgain == DBusRemoteError(name: "org.bluez.Error.Failed", message: "No discovery started"))
        #expect(try await h.get(hci0, "org.bluez.Adapter1", "Discovering") == .bool(true))
        other.close()
        try await h.waitSignal("Discovering false") { isChanged($0, "/org/bluez/hci0", "Discovering", .bool(false)) }
    }

    @Test("Connect: Connected=true, then GATT objects, then ServicesResolved=true; Disconnect in reverse")
    func connectOrder() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        try await h.connect(device)
        let items = h.signals.items
        let connected = try #require(items.firstIndex { isChanged($0, device, "Connected", .bool(true)) })
        let firstService = try #require(items.firstIndex { isAdded($0, device + "/service0001") })
        let resolved = try #require(items.firstIndex { isChanged($0, device, "ServicesResolved", .bool(true)) })
        #expect(connected < firstService && firstService < resolved)
        #expect(try await h.call(device, "org.bluez.Device1", "Connect").type == .methodReturn)  // already connected: success
        let before = h.signals.items.count
        try await h.call(device, "org.bluez.Device1", "Disconnect")
        try await h.waitSignal("Connected false") { isChanged($0, device, "Connected", .bool(false)) }
        let after = Array(h.signals.items[before...])
        let unresolved = try #require(after.firstIndex { isChanged($0, device, "ServicesResolved", .bool(false)) })
        let removed = try #require(after.firstIndex { isRemoved($0, device + "/service0001") })
        let disconnected = try #require(after.firstIndex { isChanged($0, device, "Connected", .bool(false)) })
        #expect(unresolved < removed && removed < disconnected)
    }

    @Test("Connect to an out-of-range device fails like bluetoothd")
    func connectOutOfRange() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        h.simulator.setRange(address, adapters: [])
        let e = await h.error(device, "org.bluez.Device1", "Connect")
        #expect(e == DBusRemoteError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
    }

    @Test("ReadValue, WriteValue, StartNotify and their error replies")
    func readWriteNotify() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        try await h.connect(device)
        let location = try await h.gattPath(device, "2A38")
        let read = try await h.call(location, "org.bluez.GattCharacteristic1", "ReadValue", [noOptions])
        #expect(byteArray(read.body.first) == [1])
        #expect(await h.error(location, "org.bluez.GattCharacteristic1", "ReadValue", [.properties(["offset": .uint16(9)])])
                == DBusRemoteError(name: "org.bluez.Error.InvalidArguments", message: "Invalid offset"))
        #expect(await h.error(location, "org.bluez.GattCharacteristic1", "WriteValue", [bytesValue([1]), noOptions])?.name
                == "org.bluez.Error.NotSupported")
        let control = try await h.gattPath(device, "2A39")
        try await h.call(control, "org.bluez.GattCharacteristic1", "WriteValue", [bytesValue([5, 6]), .properties(["type": .string("request")])])
        #expect(h.simulator.value(peripheral: address, characteristic: "2A39") == Data([5, 6]))
        let hr = try await h.gattPath(device, "2A37")
        #expect(await h.error(hr, "org.bluez.GattCharacteristic1", "ReadValue", [noOptions])
                == DBusRemoteError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted"))
        try await h.call(hr, "org.bluez.GattCharacteristic1", "StartNotify")
        try await h.call(hr, "org.bluez.GattCharacteristic1", "StartNotify")  // same client again: success
        try await h.waitSignal("Notifying") { isChanged($0, hr, "Notifying", .bool(true)) }
        #expect(h.simulator.notify(peripheral: address, characteristic: "2A37", value: Data([0, 99])) == 1)
        try await h.waitSignal("Value") { isChanged($0, hr, "Value", bytesValue([0, 99])) }
        try await h.call(hr, "org.bluez.GattCharacteristic1", "StopNotify")
        #expect(await h.error(hr, "org.bluez.GattCharacteristic1", "StopNotify")
                == DBusRemoteError(name: "org.bluez.Error.Failed", message: "No notify session started"))
        try await h.call(device, "org.bluez.Device1", "Disconnect")
        // Disconnect is answered before the GATT objects go (as bluetoothd answers before
        // Connected=false): the call after it must wait for their removal.
        _ = try await h.waitSignal("GATT objects removed") { isRemoved($0, hr) }
        #expect(await h.error(hr, "org.bluez.GattCharacteristic1", "StartNotify")?.name == "org.freedesktop.DBus.Error.UnknownObject")
    }

    @Test("AcquireNotify hands over a SEQPACKET socket: one datagram per notification; closing it releases")
    func acquireNotify() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        try await h.connect(device)
        let hr = try await h.gattPath(device, "2A37")
        var reply: Message? = try await h.call(hr, "org.bluez.GattCharacteristic1", "AcquireNotify", [noOptions])
        #expect(reply?.signature == "hq")
        var fd: FileDescriptor? = if case .unixFD(let f)? = reply?.body[0] { f } else { nil }
        guard fd != nil, case .uint16(let mtu)? = reply?.body[1] else { Issue.record("bad reply"); return }
        reply = nil
        #expect(mtu == 517)
        try await h.waitSignal("NotifyAcquired") { isChanged($0, hr, "NotifyAcquired", .bool(true)) }
        #expect(await h.error(hr, "org.bluez.GattCharacteristic1", "StartNotify")?.name == "org.bluez.Error.NotPermitted")
        h.simulator.notify(peripheral: address, characteristic: "2A37", value: Data([1, 2, 3]))
        h.simulator.notify(peripheral: address, characteristic: "2A37", value: Data([4]))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        let raw = fd!.rawValue
        setsockopt(raw, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 64)
        let n1 = recv(raw, &buffer, 64, 0)
        #expect(Array(buffer[..<max(0, n1)]) == [1, 2, 3])
        let n2 = recv(raw, &buffer, 64, 0)
        #expect(Array(buffer[..<max(0, n2)]) == [4])
        #expect(reply == nil)
        fd = nil  // the last reference: the client's end closes
        #expect(fd == nil)
        try await h.waitSignal("released") { isChanged($0, hr, "NotifyAcquired", .bool(false)) }
    }
}
