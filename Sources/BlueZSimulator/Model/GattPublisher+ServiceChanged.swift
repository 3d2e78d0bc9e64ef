// GattPublisher: a connected device's database changing under it (what bluetoothd does after a
// Service Changed indication): only the services that changed go away or appear.

extension GattPublisher {
    /// What identifies a service's objects: its handles, UUIDs and flags. A service whose key
    /// is unchanged keeps its objects.
    private static func key(_ s: GattDatabase.Service) -> String {
        var parts = ["\(s.handle) \(s.uuid) \(s.primary)"]
        for c in s.characteristics {
            parts.append("\(c.handle)/\(c.valueHandle) \(c.uuid) \(c.flags.joined(separator: ","))")
            for d in c.descriptors { parts.append("\(d.handle) \(d.uuid)") }
        }
        return parts.joined(separator: ";")
    }

    /// The first half of what bluetoothd 5.55–5.82 do on a Service Changed indication
    /// (src/gatt-client.c `btd_gatt_client_service_removed`): the objects of each service of `old`
    /// that is gone from the peer's database or different there are removed (deepest first), with
    /// their notification sessions and acquired sockets; unchanged services keep their objects.
    func removeChangedServices(_ device: DeviceState, old: GattDatabase) {
        guard let db = device.peer?.database else { return }
        let newKeys = Set(db.services.map(Self.key))
        for s in old.services where !newKeys.contains(Self.key(s)) {
            let sp = BlueZPath.service(device: device.path, handle: s.handle)
            let handles = Set(s.characteristics.map(\.valueHandle))
            for h in handles {
                device.acquiredNotify.removeValue(forKey: h)?.close()
                device.acquiredWrite.removeValue(forKey: h)?.close()
                device.notifySessions.removeValue(forKey: h)
            }
            let subtree = device.gattPaths.filter { $0 == sp || $0.hasPrefix(sp + "/") }
            for path in subtree.reversed() {
                index[path] = nil
                store.remove(path)
            }
            device.gattPaths.removeAll { $0 == sp || $0.hasPrefix(sp + "/") }
        }
    }

    /// The second half, once bluetoothd has read the changed range from the device again
    /// (`btd_gatt_client_service_added`): each service of the peer's database that `old` did not
    /// have as it is now, and that is not published yet, is published; Device1.UUIDs follows.
    func publishChangedServices(_ device: DeviceState, old: GattDatabase, mtu: UInt16) {
        guard let db = device.peer?.database else { return }
        let oldKeys = Set(old.services.map(Self.key))
        for s in db.services where !oldKeys.contains(Self.key(s))
            && !device.gattPaths.contains(BlueZPath.service(device: device.path, handle: s.handle)) {
            publishService(s, of: device, mtu: mtu)
        }
        store.set(device.path, "org.bluez.Device1", "UUIDs", .strings(Set(db.services.map(\.uuid)).sorted()))
    }
}
