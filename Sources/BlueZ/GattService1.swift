// org.bluez.GattService1: a service of a remote device (read-only properties).
import DBus

/// A proxy for `org.bluez.GattService1` at `/org/bluez/hciN/dev_…/serviceXXXX`.
public struct GattService1: Sendable {
    /// `org.bluez.GattService1`.
    public static let interface = "org.bluez.GattService1"

    /// The connection.
    public let connection: Connection
    /// The service's object path.
    public let path: ObjectPath

    /// A proxy for the service at `path`.
    public init(connection: Connection, path: ObjectPath) {
        self.connection = connection
        self.path = path
    }

    /// A snapshot of the service's properties, decoded tolerantly.
    public struct Properties: Sendable, Equatable {
        /// `UUID` (128-bit, lower case).
        public var uuid: String?
        /// `Primary`.
        public var primary: Bool?
        /// `Device`.
        public var device: ObjectPath?
        /// `Includes`.
        public var includes: [ObjectPath]?
        /// `Handle`.
        public var handle: UInt16?

        /// Decodes `properties` (as held by the ``ObjectTree``).
        public init(_ properties: [String: DBusValue], path: ObjectPath? = nil) {
            let r = PropertyReader(properties, interface: GattService1.interface, path: path)
            uuid = r.get("UUID")
            primary = r.get("Primary")
            device = r.get("Device")
            includes = r.get("Includes")
            handle = r.get("Handle")
        }
    }
}
