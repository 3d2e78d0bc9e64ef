// SeedCorpus: real BlueZ messages, marshalled by libdbus (`dbus_message_marshal`), as fuzz seeds.
@_spi(Fuzzing) import DBus
import Foundation

/// The seed messages for DBusMessageFuzzer.
enum SeedCorpus {
    static func bytes(_ b: [UInt8]) -> DBusValue { .array(element: .byte, b.map { .byte($0) }) }

    /// Name → wire bytes.
    static func messages() throws -> [(String, [UInt8])] {
        let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
        let char: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service000a/char000b"
        let deviceProps: [String: DBusValue] = [
            "Address": .string("C0:FF:EE:00:00:01"), "AddressType": .string("public"), "Name": .string("SensorTag"),
            "Alias": .string("SensorTag"), "Paired": .bool(false), "Connected": .bool(false), "RSSI": .int16(-52),
            "TxPower": .int16(4), "UUIDs": .array(element: .string, [.string("f000aa10-0451-4000-b000-000000000000")]),
            "Adapter": .objectPath("/org/bluez/hci0"), "ServicesResolved": .bool(false),
            "ManufacturerData": .dict(key: .uint16, value: .variant, [.init(.uint16(0x004C), .variant(bytes([2, 21, 1, 2, 3])))]),
            "ServiceData": .dict(key: .string, value: .variant, [.init(.string("0000180f-0000-1000-8000-00805f9b34fb"), .variant(bytes([87])))]),
        ]
        let adapterProps: [String: DBusValue] = [
            "Address": .string("00:AA:01:00:00:00"), "Name": .string("sim"), "Powered": .bool(true),
            "Discovering": .bool(false), "Discoverable": .bool(false), "UUIDs": .array(element: .string, []),
        ]
        let charProps: [String: DBusValue] = [
            "UUID": .string("f000aa11-0451-4000-b000-000000000000"), "Service": .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service000a"),
            "Flags": .array(element: .string, [.string("read"), .string("notify")]), "MTU": .uint16(517),
            "Notifying": .bool(false), "NotifyAcquired": .bool(false), "Value": bytes([0, 0, 64]),
        ]
        func ifaces(_ name: String, _ props: [String: DBusValue]) -> DBusValue {
            .dict(key: .string, value: .dict(key: .string, value: .variant), [.init(.string(name), .properties(props))])
        }
        var out: [(String, [UInt8])] = []
        out.append(("interfaces-added-device", try DBusFuzzing.encodeSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            arguments: [.objectPath(device), ifaces("org.bluez.Device1", deviceProps)])))
        out.append(("interfaces-added-characteristic", try DBusFuzzing.encodeSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            arguments: [.objectPath(char), ifaces("org.bluez.GattCharacteristic1", charProps)])))
        out.append(("interfaces-removed", try DBusFuzzing.encodeSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
            arguments: [.objectPath(device), .array(element: .string, [.string("org.bluez.Device1")])])))
        out.append(("properties-changed-rssi", try DBusFuzzing.encodeSignal(
            path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string("org.bluez.Device1"), .properties(["RSSI": .int16(-70), "Connected": .bool(true)]),
                        .array(element: .string, [.string("TxPower")])])))
        out.append(("properties-changed-value", try DBusFuzzing.encodeSignal(
            path: char, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string("org.bluez.GattCharacteristic1"), .properties(["Value": bytes([1, 2, 3])]), .array(element: .string, [])])))
        out.append(("properties-changed-lone-rssi", try DBusFuzzing.encodeSignal(
            path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string("org.bluez.Device1"), .properties(["RSSI": .int16(-61)]), .array(element: .string, [])])))
        out.append(("properties-changed-lone-alias", try DBusFuzzing.encodeSignal(
            path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string("org.bluez.Device1"), .properties(["Alias": .string("Sensor")]), .array(element: .string, [])])))
        let objects: DBusValue = .dict(key: .objectPath, value: .dict(key: .string, value: .dict(key: .string, value: .variant)), [
            .init(.objectPath("/org/bluez/hci0"), ifaces("org.bluez.Adapter1", adapterProps)),
            .init(.objectPath(device), ifaces("org.bluez.Device1", deviceProps)),
            .init(.objectPath(char), ifaces("org.bluez.GattCharacteristic1", charProps)),
        ])
        out.append(("get-managed-objects-reply", try DBusFuzzing.encodeReply(replySerial: 7, values: [objects])))
        out.append(("read-value-reply", try DBusFuzzing.encodeReply(replySerial: 9, values: [bytes([0, 0, 64])])))
        out.append(("name-owner-changed", try DBusFuzzing.encodeSignal(
            path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            arguments: [.string("org.bluez"), .string(":1.4"), .string("")])))
        out.append(("write-value-call", try DBusFuzzing.encodeCall(
            destination: ":1.9", path: "/org/bluecap/app/service0/char1", interface: "org.bluez.GattCharacteristic1",
            member: "WriteValue", arguments: [bytes([1]), .properties(["offset": .uint16(0), "type": .string("request"),
                                                                       "device": .objectPath(device)])])))
        out.append(("struct-variant-mix", try DBusFuzzing.encodeReply(replySerial: 11, values: [
            .struct([.int64(-1), .uint64(.max), .double(-0.5), .signature(DBusSignature("a{sv}")), .bool(true)]),
            .variant(.variant(.array(element: .int32, [.int32(1), .int32(-2)]))),
        ])))
        return out
    }

    /// Writes every seed message to `directory` (created when missing); returns the count.
    static func write(to directory: String) throws -> Int {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let all = try messages()
        for (name, bytes) in all {
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name + ".bin"))
        }
        return all.count
    }
}
