// Peripheral: the GATT objects bluetoothd holds for the device, asked once per resolution, so
// that a discovery without UUIDs ends with all of them and not with the first to arrive.
import BlueZ
import DBus

extension Peripheral {
    // MARK: - Inventory

    /// What bluetoothd said it holds under the device since its services last resolved.
    ///
    /// bluetoothd exports a device's GATT objects and then sets `ServicesResolved`, but it sends
    /// the signals later, from one idle callback per object, in the order the objects first had
    /// something to send: a `Device1` property change queued before the export (for example its
    /// `UUIDs`) takes `ServicesResolved = true` out before the `InterfacesAdded` of the GATT
    /// objects (seen on 5.82 in the VM: a discovery without UUIDs ended with 3 of 4 services).
    /// The reply to `GetManagedObjects` lists what is registered, whatever is still to be sent.
    enum GattInventory: Sendable {
        /// Not asked since the services last resolved.
        case unknown
        /// `GetManagedObjects` is on its way (its query number).
        case asking(Int)
        /// The device's GATT object paths bluetoothd listed (less those removed since).
        case known(Set<ObjectPath>)
        /// The call failed: discovery goes by the signals alone.
        case unavailable
    }

    /// How long the inventory's `GetManagedObjects` may take.
    static let inventoryTimeout: Duration = .seconds(5)

    /// Whether every GATT object bluetoothd listed under `prefix` (the device, or one of its
    /// services) is in the tree. The first call after the services resolved asks bluetoothd
    /// (`org.freedesktop.DBus.ObjectManager.GetManagedObjects`) and answers false until the reply
    /// is in; the waiters run again then. Call only once `ServicesResolved` is true: before that
    /// bluetoothd may still be discovering.
    func gattObjectsComplete(under prefix: ObjectPath) -> Bool {
        let (inventory, query) = state.withLock { s -> (GattInventory, Int?) in
            guard case .unknown = s.gattInventory else { return (s.gattInventory, nil) }
            s.gattInventoryQueries += 1
            s.gattInventory = .asking(s.gattInventoryQueries)
            return (s.gattInventory, s.gattInventoryQueries)
        }
        if let query { askInventory(query) }
        switch inventory {
        case .unknown, .asking:
            return false
        case .unavailable:
            return true
        case .known(let paths):
            let inside = prefix.rawValue + "/"
            return paths.allSatisfy { !$0.rawValue.hasPrefix(inside) || tree.interfaces(at: $0) != nil }
        }
    }

    /// Asks bluetoothd for its objects and keeps the device's GATT paths, unless the services
    /// resolved again (or the link ended) meanwhile.
    private func askInventory(_ query: Int) {
        let device = path
        tree.fetchObjects(timeout: Self.inventoryTimeout) { [weak self] result in
            guard let self else { return }
            let inventory: GattInventory
            switch result {
            case .success(let objects):
                let inside = device.rawValue + "/"
                let gatt = objects.filter { path, ifaces in
                    path.rawValue.hasPrefix(inside) && (ifaces[GattService1.interface] != nil
                        || ifaces[GattCharacteristic1.interface] != nil || ifaces[GattDescriptor1.interface] != nil)
                }
                inventory = .known(Set(gatt.keys))
            case .failure(let error):
                BlueZLog.debug("\(device) GATT inventory (GetManagedObjects) failed: \(error); discovery goes by the signals")
                inventory = .unavailable
            }
            let current = self.state.withLock { s -> Bool in
                guard case .asking(query) = s.gattInventory else { return false }
                s.gattInventory = inventory
                return true
            }
            if current { self.runWaiters() }
        }
    }

    /// The services resolve again or the link ended: the inventory is asked afresh next time.
    func forgetGattInventory() {
        state.withLock { $0.gattInventory = .unknown }
    }

    /// A GATT object under the device went away: it is no longer waited for.
    func gattObjectRemoved(_ removed: ObjectPath) {
        state.withLock { s in
            guard case .known(var paths) = s.gattInventory, paths.remove(removed) != nil else { return }
            s.gattInventory = .known(paths)
        }
    }
}
