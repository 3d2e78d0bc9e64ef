// GattPublisher: a connected device's GATT database as GattService1, GattCharacteristic1 and
// GattDescriptor1 objects in the store, and the index from those paths back to what they are.

// MARK: - GattPublisher

/// Publishes a device's GATT objects when its services resolve and removes them when its link
/// goes; owns the index the GATT client methods resolve object paths with.
///
/// Part of ``SimulatorCore`` and confined to its executor, like the rest of its state.
final class GattPublisher {
    /// What a published GATT object is.
    enum ObjectKind {
        case service(UInt16)
        case characteristic(valueHandle: UInt16)
        case descriptor(UInt16)
    }

    let store: ObjectStore
    /// Characteristics carry `MTU` (BlueZ 5.62+; ``BlueZProfile/characteristicMTU``).
    var includesMTU = true
    /// GATT object path → (device, attribute).
    var index: [String: (device: DeviceState, target: ObjectKind)] = [:]

    init(store: ObjectStore) {
        self.store = store
    }

    /// The published object at `path`: its device and what it is.
    func object(at path: String) -> (device: DeviceState, target: ObjectKind)? { index[path] }

    /// Forgets every object (bluetoothd restarting: the store is reset with it).
    func removeAll() { index.removeAll() }

    /// Publishes the peer's database: each service, then its characteristics and descriptors,
    /// in handle order (one InterfacesAdded each); Device1.UUIDs becomes the service UUIDs.
    func publish(_ device: DeviceState, mtu: UInt16) {
        guard device.gattPaths.isEmpty, let db = device.peer?.database else { return }
        for s in db.services { publishService(s, of: device, mtu: mtu) }
        store.set(device.path, "org.bluez.Device1", "UUIDs", .strings(Set(db.services.map(\.uuid)).sorted()))
    }

    /// Publishes one service with its characteristics and descriptors (one InterfacesAdded each).
    func publishService(_ s: GattDatabase.Service, of device: DeviceState, mtu: UInt16) {
        let sp = BlueZPath.service(device: device.path, handle: s.handle)
        store.add(sp, ["org.bluez.GattService1": [
            "UUID": .string(s.uuid), "Primary": .bool(s.primary), "Device": .objectPath(device.path),
            "Includes": .objectPaths([]), "Handle": .uint16(s.handle),
        ]])
        index[sp] = (device, .service(s.handle))
        device.gattPaths.append(sp)
        for c in s.characteristics {
            let cp = BlueZPath.characteristic(service: sp, handle: c.handle)
            var props: [String: PropertyValue] = [
                "UUID": .string(c.uuid), "Service": .objectPath(sp), "Flags": .strings(c.flags),
                "Handle": .uint16(c.handle),
            ]
            if includesMTU { props["MTU"] = .uint16(mtu) }
            if c.canNotify {
                props["Notifying"] = .bool(false)
                props["NotifyAcquired"] = .bool(false)
            }
            if c.has(.writeWithoutResponse) { props["WriteAcquired"] = .bool(false) }
            store.add(cp, ["org.bluez.GattCharacteristic1": props])
            index[cp] = (device, .characteristic(valueHandle: c.valueHandle))
            device.gattPaths.append(cp)
            for d in c.descriptors {
                let dp = BlueZPath.descriptor(characteristic: cp, handle: d.handle)
                store.add(dp, ["org.bluez.GattDescriptor1": [
                    "UUID": .string(d.uuid), "Characteristic": .objectPath(cp), "Handle": .uint16(d.handle),
                ]])
                index[dp] = (device, .descriptor(d.handle))
                device.gattPaths.append(dp)
            }
        }
    }

    /// Removes the GATT objects (descriptors, characteristics, services: deepest first),
    /// ends notification sessions and closes acquired sockets.
    func unpublish(_ device: DeviceState) {
        for socket in device.acquiredNotify.values { socket.close() }
        for socket in device.acquiredWrite.values { socket.close() }
        device.acquiredNotify.removeAll()
        device.acquiredWrite.removeAll()
        device.notifySessions.removeAll()
        for path in device.gattPaths.reversed() {
            index[path] = nil
            store.remove(path)
        }
        device.gattPaths.removeAll()
    }
}
