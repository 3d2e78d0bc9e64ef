// Property snapshots decode tolerantly; BlueZ error names map to kinds with the call and path.
import BlueZ
import DBus
import Foundation
import Testing

@Suite("Proxy decoding")
struct ProxyDecodingTests {
    @Test("a property of the wrong type is ignored; the others decode")
    func wrongTypeIgnored() {
        let props = Device1.Properties([
            "Address": .string("C0:FF:EE:00:00:01"),
            "RSSI": .string("-50"),  // wrong type: BlueZ documents int16
            "Connected": .bool(true),
            "UUIDs": .array(element: .string, [.string("0000180f-0000-1000-8000-00805f9b34fb")]),
            "ManufacturerData": .dict(key: .uint16, value: .variant, [.init(.uint16(13), .variant(.array(element: .byte, [.byte(1), .byte(2)])))]),
            "ServiceData": .dict(key: .string, value: .variant, [.init(.string("180f"), .variant(.uint32(5)))]),
        ])
        #expect(props.address == "C0:FF:EE:00:00:01")
        #expect(props.rssi == nil)
        #expect(props.connected == true)
        #expect(props.uuids?.count == 1)
        #expect(props.manufacturerData == [13: Data([1, 2])])
        #expect(props.serviceData == [:])
    }

    @Test("characteristic and adapter snapshots read BlueZ's documented types")
    func snapshots() {
        let c = GattCharacteristic1.Properties([
            "UUID": .string("f000aa11-0451-4000-b000-000000000000"), "Flags": .array(element: .string, [.string("read"), .string("notify")]),
            "Value": .array(element: .byte, [.byte(9)]), "MTU": .uint16(247), "Notifying": .uint32(1),
        ])
        #expect(c.flags == ["read", "notify"])
        #expect(c.value == Data([9]))
        #expect(c.mtu == 247)
        #expect(c.notifying == nil)
        let a = Adapter1.Properties(["Powered": .bool(true), "Address": .string("00:AA:01:00:00:00"), "Discovering": .byte(1)])
        #expect(a.powered == true && a.discovering == nil)
        #expect(Adapter1.name(of: "/org/bluez/hci12") == "hci12")
        #expect(Adapter1.index(of: "/org/bluez/hci12") == 12)
    }

    @Test("a failed call becomes a BlueZError naming the operation and the object")
    func errorMapping() {
        let e = BlueZError(.remote(DBusRemoteError(name: "org.bluez.Error.InProgress", message: "In Progress")),
                           operation: "org.bluez.Device1.Connect", path: "/org/bluez/hci0/dev_C0")
        #expect(e.kind == .inProgress && e.isTransient)
        #expect(e.description == "org.bluez.Device1.Connect on /org/bluez/hci0/dev_C0 failed: InProgress: In Progress")
        #expect(BlueZError(.timeout(after: .seconds(2))).kind == .timeout)
        #expect(BlueZError(kind: .failed, message: "le-connection-abort-by-local").isTransient)
        #expect(!BlueZError(kind: .failed, message: "Page Timeout").isTransient)
    }
}
