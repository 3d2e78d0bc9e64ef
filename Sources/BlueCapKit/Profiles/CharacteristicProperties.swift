// CharacteristicProperties: what a characteristic supports, and BlueZ's Flags strings for it.

import Foundation

/// The operations a characteristic supports (the GATT characteristic properties, plus the two
/// extended properties). Maps to and from the `Flags` property of `org.bluez.GattCharacteristic1`.
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The GATT property bits (0x01…0x80), then the extended properties at 0x100 and 0x200.
    public let rawValue: UInt16

    /// Wraps raw bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Value may be broadcast in advertisements (Flags `"broadcast"`).
    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    /// Value can be read (`"read"`).
    public static let read = CharacteristicProperties(rawValue: 0x02)
    /// Value can be written without a response (`"write-without-response"`).
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    /// Value can be written with a response (`"write"`).
    public static let write = CharacteristicProperties(rawValue: 0x08)
    /// Value changes are notified (`"notify"`).
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    /// Value changes are indicated, with confirmation (`"indicate"`).
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
    /// Signed writes without a response (`"authenticated-signed-writes"`).
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
    /// Extended properties descriptor present (`"extended-properties"`).
    public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)
    /// Reliable (queued) writes (`"reliable-write"`, an extended property).
    public static let reliableWrite = CharacteristicProperties(rawValue: 0x100)
    /// Writable user description descriptor (`"writable-auxiliaries"`, an extended property).
    public static let writableAuxiliaries = CharacteristicProperties(rawValue: 0x200)

    /// Each property with its BlueZ `Flags` string, in bit order.
    public static let bluezFlagNames: [(property: CharacteristicProperties, flag: String)] = [
        (.broadcast, "broadcast"),
        (.read, "read"),
        (.writeWithoutResponse, "write-without-response"),
        (.write, "write"),
        (.notify, "notify"),
        (.indicate, "indicate"),
        (.authenticatedSignedWrites, "authenticated-signed-writes"),
        (.extendedProperties, "extended-properties"),
        (.reliableWrite, "reliable-write"),
        (.writableAuxiliaries, "writable-auxiliaries"),
    ]

    /// The properties named by BlueZ `Flags` strings. Security flags imply the operation they
    /// qualify, as bluetoothd treats them (`"encrypt-read"` implies `.read`); unknown strings are ignored.
    public init(bluezFlags: [String]) {
        var properties: CharacteristicProperties = []
        for flag in bluezFlags {
            if let entry = Self.bluezFlagNames.first(where: { $0.flag == flag }) {
                properties.insert(entry.property)
            } else if let operation = CharacteristicPermissions.securedOperation(of: flag) {
                switch operation {
                case .read: properties.insert(.read)
                case .write: properties.insert(.write)
                case .notify: properties.insert(.notify)
                case .indicate: properties.insert(.indicate)
                }
            }
        }
        self = properties
    }

    /// The BlueZ `Flags` strings for these properties, in bit order.
    public var bluezFlags: [String] {
        Self.bluezFlagNames.filter { contains($0.property) }.map(\.flag)
    }

    /// The Flags strings joined with `|`, or `[]`.
    public var description: String {
        let flags = bluezFlags
        return flags.isEmpty ? "[]" : flags.joined(separator: "|")
    }
}
