// ObjectTree: the direct route of one property's lone changes (a scan storm's RSSI updates).
import DBus

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
    func routedProperty(path: ObjectPath, interface: String, name: String, value: DBusValue, sender: String?) -> Bool {
        let handlers = state.withLock { s -> [(id: Int, handler: PropertyHandler)]? in
            guard !s.propertyRoutes.isEmpty, let routes = s.propertyRoutes[PropertyRouteKey(interface: interface, name: name)],
                  s.status.loaded, let owner = s.status.owner, sender == nil || sender == owner else { return nil }
            // Nil when the object or interface is unknown (the generic path ignores the signal).
            guard let replaced = s.objects[path]?[interface]?.replace(name, with: value) else { return nil }
            if let old = replaced.previous, !old.hasSameType(as: value) {
                // A property never changes type (see `apply`): the generic path rejects it.
                s.objects[path]?[interface]?[name] = old
                return nil
            }
            return routes
        }
        guard let handlers else { return false }
        for route in handlers { route.handler(path, value) }
        return true
    }
}
