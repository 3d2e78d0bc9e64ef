// Characteristic: a GATT characteristic of a connected peripheral.
import BlueZ
import DBus
import Foundation
import Futures
import Locking

/// A GATT characteristic (`org.bluez.GattCharacteristic1`) of a ``Service``.
///
/// Reads, writes and notification changes go through the device's operation queue, in order:
/// reads may run together (bluetoothd queues, and merges, concurrent ReadValue calls), every
/// other operation runs alone on the device.
public final class Characteristic: Sendable, Hashable, CustomStringConvertible {
    /// How to write.
    public enum WriteType: Sendable, Equatable {
        /// Write Request, acknowledged by the peripheral (`WriteValue` type "request").
        case withResponse
        /// Write Command, not acknowledged (`WriteValue` type "command").
        case withoutResponse
    }

    /// How notifications reach us.
    public enum NotificationTransport: Sendable, Equatable {
        /// `AcquireNotify`: a socket, one datagram per notification.
        case acquiredSocket
        /// `StartNotify`: `Value` PropertiesChanged signals.
        case propertiesChanged
    }

    /// The notification state: phases, events and actions (see ``NotificationStateMachine``).
    typealias Notifications = NotificationStateMachine<NotificationSocket>

    /// What ``state``'s lock guards.
    struct State {
        var properties: GattCharacteristic1.Properties
        var value: Data?
        /// Whether notifications are on, and how (fed under the lock by Characteristic+Notifications).
        var notifications = Notifications()
        /// The transport the app asked for in its last `startNotifying(via:)`.
        var preferredTransport = NotificationTransport.acquiredSocket
        /// The open update streams (``receiveNotificationUpdates(capacity:)``).
        var streams = NotificationStreams<NotificationUpdate>()
    }

    /// The characteristic UUID (`GattCharacteristic1.UUID`).
    public let uuid: BLEUUID
    /// The service it belongs to.
    public let service: Service
    let path: ObjectPath
    /// `GattCharacteristic1.UUID` as BlueZ wrote it when this object was made (compared as text
    /// before any parsing when an operation starts, see ``replacedError(_:)``).
    let uuidText: String?
    let state: Locked<State>

    init(uuid: BLEUUID, path: ObjectPath, service: Service, properties: GattCharacteristic1.Properties) {
        self.uuid = uuid
        self.path = path
        self.service = service
        self.uuidText = properties.uuid
        state = Locked(State(properties: properties, value: properties.value))
    }

    /// The peripheral.
    public var peripheral: Peripheral { service.peripheral }
    /// The BlueZ object path.
    public var objectPath: String { self.path.rawValue }
    var proxy: GattCharacteristic1 { GattCharacteristic1(connection: peripheral.connection, path: path) }

    private var currentProperties: GattCharacteristic1.Properties {
        if let raw = peripheral.tree.properties(at: path, interface: GattCharacteristic1.interface) {
            let p = GattCharacteristic1.Properties(raw, path: path)
            self.state.withLock { $0.properties = p }
            return p
        }
        return self.state.withLock { $0.properties }
    }

    /// The properties, from `GattCharacteristic1.Flags`.
    public var properties: CharacteristicProperties { CharacteristicProperties(bluezFlags: flags) }
    /// `GattCharacteristic1.Flags` as BlueZ reports them.
    public var flags: [String] { currentProperties.flags ?? [] }
    /// The ATT MTU (`GattCharacteristic1.MTU`, or the one `AcquireNotify` returned); nil once the
    /// device object is gone and after ``Peripheral/terminate()`` (no link, no MTU).
    public var mtu: UInt16? {
        guard peripheral.isLive else { return nil }
        if let socket = self.state.withLock({ $0.notifications.socket }) { return socket.mtu }
        return currentProperties.mtu
    }
    /// The last value read or notified: a record, kept after the link, the device object or the
    /// peripheral (``Peripheral/terminate()``) is gone.
    public var value: Data? { self.state.withLock { $0.value } }
    /// Whether notifications are on (started by us); false after the link dropped, the device
    /// object went or ``Peripheral/terminate()``.
    public var isNotifying: Bool { self.state.withLock { $0.notifications.isOn } }
    /// How notifications arrive, while on (nil otherwise).
    public var notificationTransport: NotificationTransport? { self.state.withLock { $0.notifications.transport } }

    /// The value decoded as `T` (nil when there is none or it does not decode).
    public func value<T: Deserializable>(as type: T.Type) -> T? {
        guard let v = value else { return nil }
        return SerDe.deserialize(v, as: T.self)
    }

    /// The descriptors (`org.bluez.GattDescriptor1` objects below the characteristic); empty once
    /// the device object is gone and after ``Peripheral/terminate()``.
    public var descriptors: [Descriptor] {
        peripheral.tree.paths(withInterface: GattDescriptor1.interface, under: path)
            .compactMap { peripheral.descriptor(at: $0, characteristic: self) }
    }

    /// The descriptor with `uuid`, if present.
    public func descriptor(_ uuid: BLEUUID) -> Descriptor? { descriptors.first { $0.uuid == uuid } }

    // MARK: - Read and write

    /// Reads the value (`org.bluez.GattCharacteristic1.ReadValue`); ``value`` holds it after.
    public func read(timeout: Duration = .seconds(10)) -> Future<Characteristic> {
        let operation = "Characteristic.read (org.bluez.GattCharacteristic1.ReadValue)"
        let promise = Promise<Characteristic>()
        if let down = peripheral.linkDown { return failed(promise, down, operation) }
        let proxy = self.proxy
        peripheral.operations.enqueue(operation, path: self.path.rawValue, access: .shared, timeout: timeout, promise: promise) { [self] op in
            if let stale = replacedError(operation) { return op.fail(stale) }
            proxy.readValue(timeout: peripheral.clock.backstop(for: timeout)) { result in
                if case .success(let data) = result { self.received(data, via: .readReply) }
                op.complete(result) { _ in self }
            }
        }
        return promise.future
    }

    /// Writes `data` (`org.bluez.GattCharacteristic1.WriteValue` with type "request" for
    /// `.withResponse`, "command" for `.withoutResponse`).
    public func write(data: Data, timeout: Duration = .seconds(10), type: WriteType = .withResponse) -> Future<Characteristic> {
        let operation = "Characteristic.write (org.bluez.GattCharacteristic1.WriteValue)"
        let promise = Promise<Characteristic>()
        if let down = peripheral.linkDown { return failed(promise, down, operation) }
        let proxy = self.proxy
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, promise: promise) { [self] op in
            if let stale = replacedError(operation) { return op.fail(stale) }
            proxy.writeValue(data, type: type == .withResponse ? .request : .command, timeout: peripheral.clock.backstop(for: timeout)) { result in
                op.complete(result) { _ in self }
            }
        }
        return promise.future
    }

    /// Writes `value` serialized with ``SerDe`` (`org.bluez.GattCharacteristic1.WriteValue`).
    public func write<T: Deserializable>(_ value: T, timeout: Duration = .seconds(10), type: WriteType = .withResponse) -> Future<Characteristic> {
        write(data: SerDe.serialize(value), timeout: timeout, type: type)
    }

    /// A failure when the object at our path now holds another characteristic: after a
    /// firmware update changes the device's services, BlueZ may reuse the path for a different
    /// attribute, and the call would reach it. Checked as each operation starts. (A path that is
    /// simply gone is left to BlueZ, which answers `UnknownObject`.)
    func replacedError(_ operation: String) -> PeripheralError? {
        // The same text as at creation (every operation but the rare replacement): nothing to parse.
        guard case .string(let text)? = peripheral.tree.properties(at: path, interface: GattCharacteristic1.interface)?["UUID"],
              text != uuidText, let now = BLEUUID(string: text), now != uuid else { return nil }
        return PeripheralError(kind: .notFound, operation: operation, path: path.rawValue,
                               message: "\(path.rawValue) is now characteristic \(now), not \(uuid): the device's services changed; discover them again")
    }

    func failed(_ promise: Promise<Characteristic>, _ kind: PeripheralError.Kind, _ operation: String, _ message: String = "") -> Future<Characteristic> {
        promise.failure(PeripheralError(kind: kind, operation: operation, path: self.path.rawValue, message: message))
        return promise.future
    }

    public static func == (a: Characteristic, b: Characteristic) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "Characteristic(\(uuid))" }
}
