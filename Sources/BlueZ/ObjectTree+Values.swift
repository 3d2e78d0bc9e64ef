// ObjectTree: the direct route of characteristic notifications (StartNotify `Value` changes).
@_spi(Testing) import DBus
import Foundation

extension ObjectTree {
    // MARK: - Observing values

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
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.valueRoutes[path, default: ValueRoute()].handlers.append((s.nextID, handler))
            return s.nextID
        }
        return ObjectTreeObservation { [weak self] in
            self?.state.withLock { s in
                // The route's bytes go to the cache before the route does.
                s.writePendingValues()
                s.valueRoutes[path]?.handlers.removeAll { $0.id == id }
                if s.valueRoutes[path]?.handlers.isEmpty == true { s.valueRoutes.removeValue(forKey: path) }
            }
        }
    }

    // MARK: - The direct route

    /// A PropertiesChanged signal, before it is decoded (owner thread). Handles it and returns
    /// true when it is a lone `Value` change of a characteristic with a value handler, or a
    /// single basic-valued change (``receivedSingleChange(_:)``); returns false (the signal
    /// then takes the generic path, ``received(_:)``) otherwise, including every lone `Value`
    /// change that path would ignore or reject.
    func receivedValue(_ view: SignalView) -> Bool {
        // The lone change is read once, for both routes.
        guard let path = view.path, let change = LoneChange(view) else { return false }
        guard change.isProperty("Value", of: GattCharacteristic1.interface), let data = change.bytes else {
            return receivedSingleChange(change, path: path, sender: view.sender)
        }
        let sender = view.sender
        let handlers = state.withLock { s -> [(id: Int, handler: ValueHandler)]? in
            guard s.status.loaded, let owner = s.status.owner, sender == nil || sender == owner,
                  let slot = s.valueRoutes.index(forKey: path) else { return nil }
            if s.valueRoutes.values[slot].pending == nil {
                // The first change since the cache was last read or changed: the checks of the
                // generic path. Nil when the object or interface is unknown (it ignores the
                // signal), or when `Value` has another type (a property never changes type, see
                // `apply`: it rejects the change). Later changes replace the pending bytes,
                // since nothing can have changed the cache in between.
                guard let properties = s.storedObjects[path]?[GattCharacteristic1.interface] else { return nil }
                if let old = properties["Value"], !old.hasSameType(as: Self.byteArray) { return nil }
                s.valuesPending = true
            }
            s.valueRoutes.values[slot].pending = data
            return s.valueRoutes.values[slot].handlers
        }
        guard let handlers else { return false }
        for route in handlers {
            PathWorkProbe.visit()
            route.handler(data)
        }
        return true
    }

    /// The type of a characteristic's `Value` (`ay`), for the route's type check.
    static let byteArray = DBusValue.array(element: .byte, [])

    /// A PropertiesChanged that changes one property with a basic value (an RSSI update, a
    /// `Connected` or `Notifying` flip, …) and invalidates nothing: read in place into the
    /// event the generic path would decode, without building the `Message`. False for any
    /// other shape (the generic path then takes it).
    func receivedSingleChange(_ change: LoneChange, path: ObjectPath, sender: String?) -> Bool {
        guard let value = change.basicValue else { return false }
        if routedProperty(path: path, change: change, value: value, sender: sender) { return true }
        let (interface, name) = (change.interfaceName, change.propertyName)
        apply(.propertiesChanged(path, interface: interface, changed: [name: value], invalidated: []),
              sender: sender, from: "PropertiesChanged \(path.rawValue) \(interface).\(name)")
        return true
    }
}

/// What ``Swift/Dictionary/replace(_:with:)`` replaced (a struct, so that an optional chain
/// through it tells "no dictionary" from "no previous value").
struct ReplacedProperty {
    var previous: DBusValue?
}

extension Dictionary where Key == String, Value == DBusValue {
    /// Sets `name` to `value` in place; returns the previous value.
    mutating func replace(_ name: String, with value: DBusValue) -> ReplacedProperty {
        ReplacedProperty(previous: updateValue(value, forKey: name))
    }
}
