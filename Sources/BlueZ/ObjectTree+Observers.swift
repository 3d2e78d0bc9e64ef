// ObjectTree+Observers: registering observers (events of the tree, a path or a subtree; the
// lone `Value` changes of a characteristic; the lone changes of one property).
import DBus
import Foundation

extension ObjectTree {
    // MARK: - Observing events

    /// Calls `handler` with every event of the tree.
    public func observe(_ handler: @escaping @Sendable (ObjectTreeEvent) -> Void) -> ObjectTreeObservation {
        register(.tree, .events(handler))
    }

    /// Calls `handler` with the events about `path` itself.
    public func observe(path: ObjectPath, _ handler: @escaping @Sendable (ObjectTreeEvent) -> Void) -> ObjectTreeObservation {
        register(.path(path), .events(handler))
    }

    /// Calls `handler` with the events about `root` and every object below it.
    public func observe(subtree root: ObjectPath, _ handler: @escaping @Sendable (ObjectTreeEvent) -> Void) -> ObjectTreeObservation {
        register(.subtree(root), .events(handler))
    }

    // MARK: - Observing lone changes

    /// Calls `handler` with the new `org.bluez.GattCharacteristic1.Value` of the characteristic
    /// at `path` whenever a PropertiesChanged signal changes only `Value` (the shape of every
    /// StartNotify notification and of the change after a `ReadValue`).
    ///
    /// Such a signal is read straight from the message (no ``DBusValue`` tree, no generic event)
    /// and, while a value handler of its path is registered, goes to the value handlers only:
    /// the tree's cache is updated as usual, but tree, path and subtree observers do not receive
    /// it as a `.propertiesChanged` event. Every other signal about `path` (a `Value` change
    /// together with another property, `Notifying`, …) reaches them as before. Handlers run on
    /// the connection's owner thread, in signal order with every other event, and must not block.
    public func observeValue(at path: ObjectPath, _ handler: @escaping @Sendable (Data) -> Void) -> ObjectTreeObservation {
        register(.path(path), .values(handler))
    }

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
        register(.tree, .property(ObjectTreeRoutes.PropertyKey(interface: interface, name: property), handler))
    }

    // MARK: - Registering

    /// Adds an observer to the routes; the observation removes it.
    private func register(_ scope: ObjectTreeRoutes.Scope, _ target: ObjectTreeRoutes.Target) -> ObjectTreeObservation {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.routes.add(s.nextID, scope, target)
            return s.nextID
        }
        let kind = target.kind
        return ObjectTreeObservation { [weak self] in
            self?.state.withLock { s in
                // A value route's bytes go to the cache before the route does.
                if case .values = kind { s.writePendingValues() }
                s.routes.remove(id, scope, kind)
            }
        }
    }
}
