// LocalGattService: an org.bluez.GattService1 object this process exports.

import DBus
import Foundation

/// A primary or secondary service of a local GATT application, exported as
/// `org.bluez.GattService1` at `<root>/serviceN`.
public final class LocalGattService: Sendable {
    /// The interface name.
    public static let interface = "org.bluez.GattService1"
    /// The UUID, lowercase 128-bit form.
    public let uuid: String
    /// `Primary`.
    public let isPrimary: Bool
    /// The characteristics, exported at `<service>/charM` in this order.
    public let characteristics: [LocalGattCharacteristic]

    /// A service.
    public init(uuid: String, isPrimary: Bool = true, characteristics: [LocalGattCharacteristic]) {
        self.uuid = uuid.lowercased()
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }

    func dbusInterface() -> DBusInterface {
        DBusInterface(name: Self.interface, properties: [
            DBusProperty("UUID", type: .string, value: .string(uuid)),
            DBusProperty("Primary", type: .bool, value: .bool(isPrimary)),
            DBusProperty("Includes", type: .array(.objectPath), value: .array(element: .objectPath, [])),
        ])
    }
}
