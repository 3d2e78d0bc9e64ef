// LocalGattDescriptor: an org.bluez.GattDescriptor1 object this process exports.

import DBus
import Foundation

/// A descriptor of a local characteristic, exported as `org.bluez.GattDescriptor1` at
/// `<char>/descK`. Reads and writes follow the same rules as ``LocalGattCharacteristic``.
public final class LocalGattDescriptor: Sendable {
    /// The interface name.
    public static let interface = "org.bluez.GattDescriptor1"

    /// The UUID, lowercase 128-bit form.
    public let uuid: String
    /// The `Flags` exported (`read`, `write`, `encrypt-read`, …).
    public let flags: [String]
    let attribute: LocalAttribute

    /// A descriptor.
    public init(uuid: String, flags: [String], value: Data = Data(), maxLength: Int = LocalGattCharacteristic.defaultMaxLength,
                requestTimeout: Duration = .seconds(10)) {
        self.uuid = uuid.lowercased()
        self.flags = flags
        attribute = LocalAttribute(interface: Self.interface, canRead: LocalAttribute.allowsRead(flags),
                                   canWrite: LocalAttribute.allowsWrite(flags), maxLength: maxLength,
                                   value: value, requestTimeout: requestTimeout)
    }

    /// The stored value.
    public var value: Data {
        get { attribute.value }
        set { attribute.value = newValue }
    }

    /// Routes `ReadValue` calls to `handler` (nil: answer from ``value``).
    public func setReadHandler(_ handler: GattRequestHandler?) {
        attribute.state.withLock { $0.readHandler = handler }
    }

    /// Routes `WriteValue` calls to `handler` (nil: store the bytes).
    public func setWriteHandler(_ handler: GattRequestHandler?) {
        attribute.state.withLock { $0.writeHandler = handler }
    }

    func dbusInterface(characteristic: ObjectPath) -> DBusInterface {
        DBusInterface(
            name: Self.interface,
            methods: [
                DBusMethod("ReadValue", input: "a{sv}", output: "ay") { [attribute] in attribute.readValue($0, $1) },
                DBusMethod("WriteValue", input: "aya{sv}") { [attribute] in attribute.writeValue($0, $1) },
            ],
            properties: [
                DBusProperty("UUID", type: .string, value: .string(uuid)),
                DBusProperty("Characteristic", type: .objectPath, value: .objectPath(characteristic)),
                DBusProperty("Flags", type: .array(.string), value: flags.dbusValue),
                DBusProperty("Value", type: .array(.byte), value: value.dbusValue),
            ])
    }
}
