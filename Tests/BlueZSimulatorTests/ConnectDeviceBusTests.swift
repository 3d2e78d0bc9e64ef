// Adapter1.ConnectDevice on the bus, as bluetoothd --experimental answers it (src/adapter.c
// connect_device / device_connect_cb at 5.55, 5.66 and 5.82).
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Simulator: Adapter1.ConnectDevice", .serialized, .timeLimit(.minutes(1)))
struct ConnectDeviceBusTests {
    let hci0 = "/org/bluez/hci0"
    let address = "C0:FF:EE:00:00:07"
    var device: String { BlueZPath.device(adapter: 0, address: address) }

    func options(_ d: [String: DBusValue]) -> [DBusValue] { [.properties(d)] }

    @Test("a device never discovered is created, connected and its path answered; services resolve afterwards",
          arguments: [BlueZProfile.bluez5_55.experimental(true), .bluez5_66.experimental(true), .bluez5_82.experimental(true)])
    func createsAndConnects(profile: BlueZProfile) async throws {
        let h = try await BusHarness.start(adapters: 1, profile: profile)
        defer { h.stop() }
        h.simulator.add(SimulatedPeripheral.spec(address: address).advertising(uuids: ["180F"]).service("180F") {
            $0.characteristic("2A19", flags: [.read], value: Data([90]))
        })
        let reply = try await h.call(hci0, "org.bluez.Adapter1", "ConnectDevice",
                                     options(["Address": .string(address.lowercased()), "AddressType": .string("public")]))
        #expect(reply.body.first == .objectPath(try ObjectPath(device)))
        #expect(h.signals.items.contains { isAdded($0, device) })
        try await h.waitSignal("services resolved") { isChanged($0, device, "ServicesResolved", .bool(true)) }
        #expect(try await h.get(device, "org.bluez.Device1", "Connected") == .bool(true))
        #expect(h.simulator.sync { $0.discoveryClients(adapter: 0) }.isEmpty)
    }

    @Test("a device object for the address: AlreadyExists up to 5.68, connected and answered from 5.69 (5.82)",
          arguments: [(BlueZProfile.bluez5_55.experimental(true), true), (.bluez5_66.experimental(true), true), (.bluez5_82.experimental(true), false)])
    func existingDevice(profile: BlueZProfile, rejects: Bool) async throws {
        let h = try await BusHarness.start(adapters: 1, profile: profile)
        defer { h.stop() }
        let path = try await h.discover(SimulatedPeripheral.spec(address: address).advertising(uuids: ["180F"]))
        let args = options(["Address": .string(address), "AddressType": .string("public")])
        if rejects {
            #expect(await h.error(hci0, "org.bluez.Adapter1", "ConnectDevice", args)?.name == "org.bluez.Error.AlreadyExists")
        } else {
            let reply = try await h.call(hci0, "org.bluez.Adapter1", "ConnectDevice", args)
            #expect(reply.body.first == .objectPath(try ObjectPath(path)))
            #expect(try await h.get(path, "org.bluez.Device1", "Connected") == .bool(true))
        }
    }

    @Test("InvalidArguments for a malformed or zero address, an unknown type or key, no address; NotReady when off; nothing created")
    func refusals() async throws {
        let h = try await BusHarness.start(adapters: 1, profile: .bluez5_66.experimental(true))
        defer { h.stop() }
        let invalid: [[String: DBusValue]] = [
            ["Address": .string("C0:FF:EE:00:00"), "AddressType": .string("public")],
            ["Address": .string("C0:FF:EE:00:00:0G"), "AddressType": .string("public")],
            ["Address": .string("00:00:00:00:00:00"), "AddressType": .string("public")],
            ["Address": .string(address), "AddressType": .string("le")],
            ["Address": .string(address), "Bearer": .string("le")],
            ["Address": .uint32(7)],
            ["AddressType": .string("random")],
        ]
        for dict in invalid {
            #expect(await h.error(hci0, "org.bluez.Adapter1", "ConnectDevice", options(dict))?.name == "org.bluez.Error.InvalidArguments", "\(dict)")
        }
        h.simulator.setPowered(adapter: 0, false)
        let off = await h.error(hci0, "org.bluez.Adapter1", "ConnectDevice", options(["Address": .string(address), "AddressType": .string("public")]))
        #expect(off?.name == "org.bluez.Error.NotReady")
        #expect(h.simulator.sync { $0.devicePaths(adapter: 0) }.isEmpty)
    }

    @Test("an address nobody advertises (or of the other type): org.bluez.Failed after the kernel's timeout; one that starts advertising meanwhile connects")
    func notHeard() async throws {
        let h = try await BusHarness.start(adapters: 1, profile: .bluez5_82.experimental(true))
        defer { h.stop() }
        h.simulator.sync { $0.connectDeviceTimeout = .milliseconds(300) }
        let absent = await h.error(hci0, "org.bluez.Adapter1", "ConnectDevice", options(["Address": .string(address), "AddressType": .string("public")]))
        #expect(absent?.name == "org.bluez.Failed")
        h.simulator.add(SimulatedPeripheral.spec(address: address).addressType(.random).advertising(uuids: ["180F"]))
        let wrongType = await h.error(hci0, "org.bluez.Adapter1", "ConnectDevice", options(["Address": .string(address), "AddressType": .string("public")]))
        #expect(wrongType?.name == "org.bluez.Failed")
        #expect(h.simulator.sync { $0.devicePaths(adapter: 0) }.isEmpty)
        h.simulator.sync { $0.connectDeviceTimeout = .seconds(5) }
        let late = "C0:FF:EE:00:00:08"
        async let reply = h.call(hci0, "org.bluez.Adapter1", "ConnectDevice", options(["Address": .string(late), "AddressType": .string("public")]))
        h.simulator.add(SimulatedPeripheral.spec(address: late).advertising(uuids: ["180F"]))
        #expect(try await reply.body.first == .objectPath(try ObjectPath(BlueZPath.device(adapter: 0, address: late))))
    }
}
