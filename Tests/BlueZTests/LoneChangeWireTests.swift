// LoneChange on hand-marshalled PropertiesChanged signals, in both byte orders.
@_spi(Fuzzing) @testable import BlueZ
@_spi(Fuzzing) import DBus
import Foundation
import Testing
import TestSupport

@Suite("PropertiesChanged read in place, from wire bytes")
struct LoneChangeWireTests {
    // MARK: Cases

    static let characteristic = "org.bluez.GattCharacteristic1"
    static let device = "org.bluez.Device1"

    /// (interface, changes, invalidated, expected bytes for (characteristic, "Value"), expected basic value).
    static let cases: [(String, [(String, WireItem)], [String], Data?, DBusValue?)] = [
        (characteristic, [("Value", .ay([1, 2, 3]))], [], Data([1, 2, 3]), nil),
        (characteristic, [("Value", .ay([]))], [], Data(), nil),
        (characteristic, [("Value", .ay((0..<300).map { UInt8($0 % 251) }))], [], Data((0..<300).map { UInt8($0 % 251) }), nil),
        (device, [("RSSI", .n(-60))], [], nil, .int16(-60)),
        (device, [("Connected", .b(true))], [], nil, .bool(true)),
        (device, [("Alias", .s("sensor ✓"))], [], nil, .string("sensor ✓")),
        (device, [("Adapter", .o("/org/bluez/hci0"))], [], nil, .objectPath("/org/bluez/hci0")),
        (device, [("TxPower", .y(7))], [], nil, .byte(7)),
        (device, [("Appearance", .q(0x0341))], [], nil, .uint16(0x0341)),
        (device, [("Class", .u(0x1F00))], [], nil, .uint32(0x1F00)),
        (device, [("Offset", .i(-123_456))], [], nil, .int32(-123_456)),
        (device, [("Big", .x(-1 << 40))], [], nil, .int64(-1 << 40)),
        (device, [("Bigger", .t(1 << 63))], [], nil, .uint64(1 << 63)),
        (device, [("Ratio", .d(-0.125))], [], nil, .double(-0.125)),
        (characteristic, [("Value", .ay([4])), ("Notifying", .b(true))], [], nil, nil),
        (characteristic, [("Value", .ay([5]))], ["Flags"], nil, nil),
        (characteristic, [], [], nil, nil),
        (characteristic, [], ["Value"], nil, nil),
        (characteristic, [("Value", .strings(["a", "b"]))], [], nil, nil),
        (device, [("RSSI", .n(-61))], ["TxPower"], nil, nil),
        ("org.bluez.GattDescriptor1", [("Value", .ay([6]))], [], nil, nil),
        // An empty interface name: the byte order cannot be told from its length word.
        ("", [("Value", .ay([6]))], [], nil, nil),
    ]

    @Test("each reader gives what the decoded body says, in both byte orders", arguments: [false, true])
    func readersMatchDecoding(bigEndian: Bool) throws {
        for (interface, changed, invalidated, bytes, basic) in Self.cases {
            let wire = Wire.propertiesChanged(bigEndian: bigEndian, interface: interface, changed: changed, invalidated: invalidated)
            let label = "\(interface) \(changed.map(\.0)) \(invalidated)"
            let read = wire.withUnsafeBytes { raw in
                DBusFuzzing.withSignalView(messageBytes: raw) { view in
                    LoneChange(view).map { c in
                        (c.isProperty("Value", of: Self.characteristic) ? c.bytes : nil,
                         c.basicValue.map { (interface: c.interfaceName, name: c.propertyName, value: $0) })
                    } ?? (nil, nil)
                }
            }
            let (gotBytes, gotBasic) = try #require(read, "libdbus rejected the message for \(label)")
            #expect(gotBytes == bytes, "\(label)")
            #expect(gotBasic?.value == basic, "\(label)")
            if let gotBasic {
                #expect(gotBasic.interface == interface && gotBasic.name == changed[0].0, "\(label)")
            }
            let mismatch = wire.withUnsafeBytes { BlueZFuzzing.loneChangeMismatch(messageBytes: $0) }
            #expect(mismatch == nil, "\(label)")
        }
    }

    @Test("a message libdbus rejects is not read")
    func rejectedBytes() {
        var wire = Wire.propertiesChanged(bigEndian: false, interface: Self.characteristic, changed: [("Value", .ay([1]))], invalidated: [])
        wire[wire.count - 4] = 0xFF  // the `as` length word now runs past the body
        #expect(wire.withUnsafeBytes { DBusFuzzing.withSignalView(messageBytes: $0) { _ in true } } == nil)
    }
}
