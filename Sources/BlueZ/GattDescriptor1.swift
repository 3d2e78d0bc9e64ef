// org.bluez.GattDescriptor1: a descriptor of a remote characteristic.
import DBus
import Foundation

/// A proxy for `org.bluez.GattDescriptor1` at `…/charXXXX/descXXXX`.
public struct GattDescriptor1: Sendable {
    /// `org.bluez.GattDescriptor1`.
    public static let interface = "org.bluez.GattDescriptor1"

    /// The connection.
    public let connection: Connection
    /// The descriptor's object path.
    public let path: ObjectPath

    /// A proxy for the descriptor at `path`.
    public init(connection: Connection, path: ObjectPath) {
        self.connection = connection
        self.path = path
    }

    /// A snapshot of the descriptor's properties, decoded tolerantly.
    public struct Properties: Sendable, Equatable {
        /// `UUID` (128-bit, lower case).
        public var uuid: String?
        /// `Characteristic`.
        public var characteristic: ObjectPath?
        /// `Value` (the last value read).
        public var value: Data?
        /// `Flags`.
        public var flags: [String]?
        /// `Handle`.
        public var handle: UInt16?

        /// Decodes `properties` (as held by the ``ObjectTree``).
        public init(_ properties: [String: DBusValue], path: ObjectPath? = nil) {
            let r = PropertyReader(properties, interface: GattDescriptor1.interface, path: path)
            uuid = r.get("UUID")
            characteristic = r.get("Characteristic")
            value = r.bytes("Value")
            flags = r.get("Flags")
            handle = r.get("Handle")
        }
    }

    /// Calls `org.bluez.GattDescriptor1.ReadValue`.
    public func readValue(offset: UInt16 = 0, timeout: Duration, completion: @escaping @Sendable (Result<Data, BlueZError>) -> Void) {
        let options: [String: DBusValue] = offset == 0 ? [:] : ["offset": .uint16(offset)]
        let path = self.path
        connection.bluezCall(path: path, interface: Self.interface, member: "ReadValue",
                             arguments: [.properties(options)], timeout: timeout) { result in
            completion(result.flatMap { reply in
                guard let data = try? reply.body.decode(Data.self, at: 0) else {
                    return .failure(BlueZError(kind: .invalidReply, message: "ReadValue reply \(reply.signature), expected ay",
                                               operation: "\(Self.interface).ReadValue", path: path.rawValue))
                }
                return .success(data)
            })
        }
    }

    /// Calls `org.bluez.GattDescriptor1.WriteValue`.
    public func writeValue(_ value: Data, offset: UInt16 = 0, timeout: Duration,
                           completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        let options: [String: DBusValue] = offset == 0 ? [:] : ["offset": .uint16(offset)]
        connection.bluezCall(path: path, interface: Self.interface, member: "WriteValue",
                             arguments: [value.dbusValue, .properties(options)], timeout: timeout) { completion($0.void) }
    }
}
