// org.bluez.GattCharacteristic1: a characteristic of a remote device.
import DBus
import Foundation

/// A proxy for `org.bluez.GattCharacteristic1` at `…/serviceXXXX/charXXXX`.
public struct GattCharacteristic1: Sendable {
    /// `org.bluez.GattCharacteristic1`.
    public static let interface = "org.bluez.GattCharacteristic1"

    /// The connection.
    public let connection: Connection
    /// The characteristic's object path.
    public let path: ObjectPath

    /// A proxy for the characteristic at `path`.
    public init(connection: Connection, path: ObjectPath) {
        self.connection = connection
        self.path = path
    }

    /// A snapshot of the characteristic's properties, decoded tolerantly.
    public struct Properties: Sendable, Equatable {
        /// `UUID` (128-bit, lower case).
        public var uuid: String?
        /// `Service`.
        public var service: ObjectPath?
        /// `Value` (last read or notified).
        public var value: Data?
        /// `Flags` ("read", "write", "notify", …).
        public var flags: [String]?
        /// `Notifying`.
        public var notifying: Bool?
        /// `NotifyAcquired`.
        public var notifyAcquired: Bool?
        /// `WriteAcquired`.
        public var writeAcquired: Bool?
        /// `MTU` (BlueZ 5.62+).
        public var mtu: UInt16?
        /// `Handle`.
        public var handle: UInt16?

        /// Decodes `properties` (as held by the ``ObjectTree``).
        public init(_ properties: [String: DBusValue], path: ObjectPath? = nil) {
            let r = PropertyReader(properties, interface: GattCharacteristic1.interface, path: path)
            uuid = r.get("UUID")
            service = r.get("Service")
            value = r.bytes("Value")
            flags = r.get("Flags")
            notifying = r.get("Notifying")
            notifyAcquired = r.get("NotifyAcquired")
            writeAcquired = r.get("WriteAcquired")
            mtu = r.get("MTU")
            handle = r.get("Handle")
        }
    }

    /// `WriteValue`'s "type" option.
    public enum WriteType: String, Sendable {
        /// Write Request (acknowledged).
        case request
        /// Write Command (Write Without Response).
        case command
        /// Reliable (prepared) write.
        case reliable
    }

    // MARK: - Methods

    /// Calls `org.bluez.GattCharacteristic1.ReadValue`.
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

    /// Calls `org.bluez.GattCharacteristic1.WriteValue` with the "type" option when given.
    public func writeValue(_ value: Data, type: WriteType?, offset: UInt16 = 0, timeout: Duration,
                           completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        var options: [String: DBusValue] = [:]
        if let type { options["type"] = .string(type.rawValue) }
        if offset != 0 { options["offset"] = .uint16(offset) }
        connection.bluezCall(path: path, interface: Self.interface, member: "WriteValue",
                             arguments: [value.dbusValue, .properties(options)], timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.GattCharacteristic1.StartNotify` (values then arrive as `Value` PropertiesChanged).
    public func startNotify(timeout: Duration, completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "StartNotify", timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.GattCharacteristic1.StopNotify`.
    public func stopNotify(timeout: Duration, completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void) {
        connection.bluezCall(path: path, interface: Self.interface, member: "StopNotify", timeout: timeout) { completion($0.void) }
    }

    /// Calls `org.bluez.GattCharacteristic1.AcquireNotify`: a SOCK_SEQPACKET socket on which each
    /// notification is one datagram, and the MTU. Closing the socket ends the subscription.
    public func acquireNotify(timeout: Duration,
                              completion: @escaping @Sendable (Result<(fd: FileDescriptor, mtu: UInt16), BlueZError>) -> Void) {
        acquire("AcquireNotify", timeout: timeout, completion: completion)
    }

    /// Calls `org.bluez.GattCharacteristic1.AcquireWrite`: a socket on which each datagram sent is
    /// a Write Without Response, and the MTU.
    public func acquireWrite(timeout: Duration,
                             completion: @escaping @Sendable (Result<(fd: FileDescriptor, mtu: UInt16), BlueZError>) -> Void) {
        acquire("AcquireWrite", timeout: timeout, completion: completion)
    }

    private func acquire(_ member: String, timeout: Duration,
                         completion: @escaping @Sendable (Result<(fd: FileDescriptor, mtu: UInt16), BlueZError>) -> Void) {
        let path = self.path
        connection.bluezCall(path: path, interface: Self.interface, member: member,
                             arguments: [.properties([:])], timeout: timeout) { result in
            completion(result.flatMap { reply in
                guard reply.body.count == 2, let fd = try? FileDescriptor.decode(reply.body[0]),
                      let mtu = try? reply.body.decode(UInt16.self, at: 1) else {
                    return .failure(BlueZError(kind: .invalidReply, message: "\(member) reply \(reply.signature), expected hq",
                                               operation: "\(Self.interface).\(member)", path: path.rawValue))
                }
                return .success((fd, mtu))
            })
        }
    }
}
