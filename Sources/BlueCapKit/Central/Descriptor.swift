// Descriptor: a GATT descriptor of a remote characteristic.
import BlueZ
import DBus
import Foundation
import Futures
import Locking

/// A GATT descriptor (`org.bluez.GattDescriptor1`) of a ``Characteristic``.
public final class Descriptor: Sendable, Hashable, CustomStringConvertible {
    /// The descriptor UUID (`GattDescriptor1.UUID`).
    public let uuid: BLEUUID
    /// The characteristic it belongs to.
    public let characteristic: Characteristic
    let path: ObjectPath
    private let lastValue = Locked<Data?>(nil)

    init(uuid: BLEUUID, path: ObjectPath, characteristic: Characteristic) {
        self.uuid = uuid
        self.path = path
        self.characteristic = characteristic
    }

    private var peripheral: Peripheral { characteristic.service.peripheral }
    private var proxy: GattDescriptor1 { GattDescriptor1(connection: peripheral.connection, path: path) }

    /// The last value read (or BlueZ's cached `GattDescriptor1.Value`): a record, kept after the
    /// device object or the peripheral (``Peripheral/terminate()``) is gone.
    public var value: Data? {
        if let v = self.lastValue.withLock({ $0 }) { return v }
        return peripheral.tree.properties(at: path, interface: GattDescriptor1.interface).map {
            GattDescriptor1.Properties($0, path: path).value
        } ?? nil
    }

    /// Reads the value (`org.bluez.GattDescriptor1.ReadValue`), queued with the device's other GATT operations.
    public func read(timeout: Duration = .seconds(10)) -> Future<Descriptor> {
        let operation = "Descriptor.read (org.bluez.GattDescriptor1.ReadValue)"
        let promise = Promise<Descriptor>()
        if let down = peripheral.linkDown {
            promise.failure(PeripheralError(kind: down, operation: operation, path: self.path.rawValue))
            return promise.future
        }
        let proxy = self.proxy
        peripheral.operations.enqueue(operation, path: self.path.rawValue, access: .shared, timeout: timeout, promise: promise) { [self] op in
            proxy.readValue(timeout: peripheral.clock.backstop(for: timeout)) { result in
                if case .success(let data) = result { self.lastValue.withLock { $0 = data } }
                op.complete(result) { _ in self }
            }
        }
        return promise.future
    }

    /// Writes `data` (`org.bluez.GattDescriptor1.WriteValue`), queued with the device's other GATT operations.
    public func write(data: Data, timeout: Duration = .seconds(10)) -> Future<Descriptor> {
        let operation = "Descriptor.write (org.bluez.GattDescriptor1.WriteValue)"
        let promise = Promise<Descriptor>()
        if let down = peripheral.linkDown {
            promise.failure(PeripheralError(kind: down, operation: operation, path: self.path.rawValue))
            return promise.future
        }
        let proxy = self.proxy
        peripheral.operations.enqueue(operation, path: self.path.rawValue, timeout: timeout, promise: promise) { [self] op in
            proxy.writeValue(data, timeout: peripheral.clock.backstop(for: timeout)) { result in
                if case .success = result { self.lastValue.withLock { $0 = data } }
                op.complete(result) { _ in self }
            }
        }
        return promise.future
    }

    public static func == (a: Descriptor, b: Descriptor) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "Descriptor(\(uuid))" }
}
