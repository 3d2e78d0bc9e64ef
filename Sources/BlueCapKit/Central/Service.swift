// Service: a GATT service of a connected peripheral.
import BlueZ
import DBus
import Foundation
import Futures

/// A GATT service of a ``Peripheral`` (`org.bluez.GattService1`).
public final class Service: Sendable, Hashable, CustomStringConvertible {
    /// The service UUID (`GattService1.UUID`).
    public let uuid: BLEUUID
    /// The peripheral.
    public let peripheral: Peripheral
    /// `GattService1.Primary`.
    public let isPrimary: Bool
    let path: ObjectPath

    init(uuid: BLEUUID, path: ObjectPath, peripheral: Peripheral, isPrimary: Bool) {
        self.uuid = uuid
        self.path = path
        self.peripheral = peripheral
        self.isPrimary = isPrimary
    }

    /// The BlueZ object path of the service.
    public var objectPath: String { path.rawValue }

    /// The service's characteristics (`org.bluez.GattCharacteristic1` objects below it), in handle
    /// order; empty once the device object is gone and after ``Peripheral/terminate()``.
    public var characteristics: [Characteristic] {
        peripheral.tree.paths(withInterface: GattCharacteristic1.interface, under: path)
            .compactMap { peripheral.characteristic(at: $0, service: self) }
    }

    /// The characteristic with `uuid`, if present.
    public func characteristic(_ uuid: BLEUUID) -> Characteristic? { characteristics.first { $0.uuid == uuid } }

    /// Waits until the characteristics exist in BlueZ's object tree (all of `uuids`, or at least
    /// one when nil); BlueZ discovers them with the services, so this is normally immediate.
    /// Fails with `.notFound` naming the missing UUIDs when `timeout` fires.
    public func discoverCharacteristics(_ uuids: [BLEUUID]? = nil, timeout: Duration = .seconds(10)) -> Future<Service> {
        let operation = "Service.discoverCharacteristics (org.bluez.GattCharacteristic1 objects)"
        let promise = Promise<Service>()
        if let down = peripheral.linkDown {
            promise.failure(PeripheralError(kind: down, operation: operation, path: path.rawValue))
            return promise.future
        }
        let missing: @Sendable () -> [BLEUUID] = { [weak self] in
            guard let self else { return [] }
            let present = Set(self.characteristics.map(\.uuid))
            if let uuids { return uuids.filter { !present.contains($0) } }
            return present.isEmpty ? [self.uuid] : []
        }
        peripheral.wait(timeout: timeout, check: { [weak self] in
            guard let self, missing().isEmpty else { return false }
            // Without UUIDs: every characteristic bluetoothd holds for the service, once the
            // device's services resolved (Peripheral+GattInventory).
            if uuids == nil && self.peripheral.servicesResolved && !self.peripheral.gattObjectsComplete(under: self.path) { return false }
            promise.success(self)
            return true
        }, fail: { promise.failure($0) }, onTimeout: { [weak self, path] in
            if uuids == nil, let self, !self.characteristics.isEmpty {
                // Some object bluetoothd listed never came: go on with the characteristics there are.
                promise.success(self)
            } else if uuids == nil {
                promise.failure(PeripheralError(kind: .notFound, operation: operation, path: path.rawValue, message: "no characteristics"))
            } else {
                promise.failure(PeripheralError(kind: .notFound, operation: operation, path: path.rawValue,
                                                message: "characteristics not found: \(missing().map(\.description).joined(separator: ", "))"))
            }
        })
        return promise.future
    }

    public static func == (a: Service, b: Service) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "Service(\(uuid))" }
}
