// ObjectTree: the direct route of one property's lone changes (a scan storm's RSSI updates).
@_spi(Testing) import DBus

extension ObjectTree {
    typealias PropertyHandler = @Sendable (ObjectPath, DBusValue) -> Void

    /// The key of a property route: an interface and one of its properties.
    struct PropertyRouteKey: Hashable {
        let interface: String
        let name: String
    }

    // MARK: - Observing one property

    /// Calls `handler` with the object path and the new value whenever a PropertiesChanged
    /// signal of `interface` changes only `property`, to a basic value (a number, boolean, string
    /// or object path), and invalidates nothing, on any object of the tree: the shape of every
    /// `org.bluez.Device1.RSSI` update while discovering.
    ///
    /// Such a signal is read straight from the message and, while a handler of its property is
    /// registered, goes to the property's handlers only: the tree's cache is updated as usual
    /// (a value of another type than the cached one is rejected, as for every change), but tree,
    /// path and subtree observers do not receive it as a `.propertiesChanged` event. Every other
    /// change of the object (the same property together with another one, an invalidation, …)
    /// reaches them as before. Handlers run on the connection's owner thread, in signal order
    /// with every other event, and must not block.
    public func observeProperty(_ property: String, of interface: String,
                                _ handler: @escaping @Sendable (ObjectPath, DBusValue) -> Void) -> ObjectTreeObservation {
        let key = PropertyRouteKey(interface: interface, name: property)
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.propertyRoutes[key, default: []].append((s.nextID, handler))
            return s.nextID
        }
        return ObjectTreeObservation { [weak self] in
            self?.state.withLock { s in
                s.propertyRoutes[key]?.removeAll { $0.id == id }
                if s.propertyRoutes[key]?.isEmpty == true { s.propertyRoutes.removeValue(forKey: key) }
            }
        }
    }

    // MARK: - The direct route

    /// A lone basic-valued change read from a signal (owner thread): when its property has a
    /// route, the cache is updated and the route's handlers called, and the result is true.
    /// False (the change then takes the generic path, ``apply(_:sender:from:)``) when the
    /// property has no route, or when the generic path would ignore or reject the change.
    ///
    /// The route is found by comparing the change's names in place with the few routed
    /// properties (no String made for them), and the object with one lookup by path; the
    /// handlers get the cache's own key for the path, so that their lookups by it compare
    /// Strings by identity.
    func routedProperty(path: ObjectPath, change: LoneChange, value: DBusValue, sender: String?) -> Bool {
        let routed = state.withLock { s -> (ObjectPath, [(id: Int, handler: PropertyHandler)])? in
            guard !s.propertyRoutes.isEmpty, s.status.loaded, let owner = s.status.owner, sender == nil || sender == owner,
                  let (key, routes) = s.propertyRoutes.first(where: { change.isProperty($0.key.name, of: $0.key.interface) })
            else { return nil }
            s.writePendingValues()
            // Nil when the object or interface is unknown (the generic path ignores the signal).
            guard let i = s.storedObjects.index(forKey: path),
                  let replaced = s.storedObjects.values[i][key.interface]?.replace(key.name, with: value) else { return nil }
            if let old = replaced.previous, !old.hasSameType(as: value) {
                // A property never changes type (see `apply`): the generic path rejects it.
                s.storedObjects.values[i][key.interface]?[key.name] = old
                return nil
            }
            return (s.storedObjects.keys[i], routes)
        }
        guard let (stored, handlers) = routed else { return false }
        for route in handlers {
            PathWorkProbe.visit()
            route.handler(stored, value)
        }
        return true
    }
}
