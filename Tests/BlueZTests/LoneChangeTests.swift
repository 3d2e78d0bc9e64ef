// LoneChange: reading a PropertiesChanged in place, from a live bus.
@testable import BlueZ
import DBus
import Foundation
import Testing
import TestSupport

@Suite("PropertiesChanged read in place")
struct LoneChangeTests {
    static let interface = "org.bluez.GattCharacteristic1"

    static func bytes(_ values: [UInt8]) -> DBusValue { .array(element: .byte, values.map { .byte($0) }) }

    @Test("a lone byte-array change of Value with nothing invalidated gives its bytes, and no other shape")
    func loneValueShapes() async throws {
        try await withTestBus { bus in
            let emitter = try bus.connect()
            let listener = try bus.connect()
            let read = Collector<Data?>()
            let rule = MatchRule(sender: emitter.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
            let subscription = listener.subscribe(rule: rule, peek: { view in
                read.append(LoneChange(view).flatMap { $0.isProperty("Value", of: Self.interface) ? $0.bytes : nil })
                return true
            }, { _ in })
            defer { subscription.cancel() }
            try await Task.sleep(for: .milliseconds(100))

            let path: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"
            let cases: [(interface: String, changed: [String: DBusValue], invalidated: [String], expected: Data?)] = [
                (Self.interface, ["Value": Self.bytes([1, 2, 3])], [], Data([1, 2, 3])),
                (Self.interface, ["Value": Self.bytes([])], [], Data()),
                (Self.interface, ["Value": Self.bytes([4]), "Notifying": .bool(true)], [], nil),
                (Self.interface, ["Value": Self.bytes([5])], ["Flags"], nil),
                (Self.interface, [:], [], nil),
                (Self.interface, [:], ["Value"], nil),
                (Self.interface, ["Notifying": .bool(false)], [], nil),
                (Self.interface, ["Value": .string("text")], [], nil),
                (Self.interface, ["Value": .array(element: .int32, [.int32(1)])], [], nil),
                ("org.bluez.GattDescriptor1", ["Value": Self.bytes([6])], [], nil),
                (Self.interface, ["Value": Self.bytes([7, 8])], [], Data([7, 8])),
            ]
            for c in cases {
                try emitter.emitPropertiesChanged(path: path, interface: c.interface, changed: c.changed, invalidated: c.invalidated)
            }
            let items = try await read.wait(for: cases.count, timeout: .seconds(10))
            #expect(items == cases.map(\.expected))
        }
    }

    @Test("a lone change is read once: its names compared in place, a byte array or a basic value, and no other shape")
    func loneChangeShapes() async throws {
        try await withTestBus { bus in
            let emitter = try bus.connect()
            let listener = try bus.connect()
            struct Read: Equatable, Sendable {
                var interface: String, name: String, isRSSI: Bool, isValue: Bool, bytes: Data?, basic: DBusValue?
            }
            let read = Collector<Read?>()
            let rule = MatchRule(sender: emitter.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
            let subscription = listener.subscribe(rule: rule, peek: { view in
                read.append(LoneChange(view).map { c in
                    Read(interface: c.interfaceName, name: c.propertyName, isRSSI: c.isProperty("RSSI", of: "org.bluez.Device1"),
                         isValue: c.isProperty("Value", of: Self.interface), bytes: c.bytes, basic: c.basicValue)
                })
                return true
            }, { _ in })
            defer { subscription.cancel() }
            try await Task.sleep(for: .milliseconds(100))

            let path: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
            let device = "org.bluez.Device1"
            let cases: [(interface: String, changed: [String: DBusValue], invalidated: [String], expected: Read?)] = [
                (device, ["RSSI": .int16(-60)], [], Read(interface: device, name: "RSSI", isRSSI: true, isValue: false, bytes: nil, basic: .int16(-60))),
                (device, ["RSS": .int16(-60)], [], Read(interface: device, name: "RSS", isRSSI: false, isValue: false, bytes: nil, basic: .int16(-60))),
                ("org.bluez.Device", ["RSSI": .int16(-61)], [], Read(interface: "org.bluez.Device", name: "RSSI", isRSSI: false, isValue: false,
                                                                     bytes: nil, basic: .int16(-61))),
                (Self.interface, ["Value": Self.bytes([1, 2])], [], Read(interface: Self.interface, name: "Value", isRSSI: false, isValue: true,
                                                                         bytes: Data([1, 2]), basic: nil)),
                (device, ["Alias": .string("tag")], [], Read(interface: device, name: "Alias", isRSSI: false, isValue: false, bytes: nil,
                                                             basic: .string("tag"))),
                (device, ["RSSI": .int16(-62), "TxPower": .int16(4)], [], nil),
                (device, ["RSSI": .int16(-63)], ["Name"], nil),
                (device, ["UUIDs": .array(element: .string, [.string("180f")])], [], nil),
                (device, [:], [], nil),
            ]
            for c in cases {
                try emitter.emitPropertiesChanged(path: path, interface: c.interface, changed: c.changed, invalidated: c.invalidated)
            }
            let items = try await read.wait(for: cases.count, timeout: .seconds(10))
            #expect(items == cases.map(\.expected))
        }
    }
}
