// ObjectTree: the direct route of characteristic notifications (StartNotify `Value` changes).
import DBus
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
            s.valueRoutes[path, default: []].append((s.nextID, handler))
            return s.nextID
        }
        return ObjectTreeObservation { [weak self] in
            self?.state.withLock { s in
                s.valueRoutes[path]?.removeAll { $0.id == id }
                if s.valueRoutes[path]?.isEmpty == true { s.valueRoutes.removeValue(forKey: path) }
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
        guard let data = view.onlyChangedBytes(interface: GattCharacteristic1.interface, property: "Value"),
              let path = view.path else { return receivedSingleChange(view) }
        let sender = view.sender
        // The cache's form of the value, built before taking the lock.
        let value = DBusValue.array(element: .byte, data.withUnsafeBytes { bytes in bytes.map { DBusValue.byte($0) } })
        let handlers = state.withLock { s -> [(id: Int, handler: ValueHandler)]? in
            guard let routes = s.valueRoutes[path], s.status.loaded, let owner = s.status.owner,
                  sender == nil || sender == owner else { return nil }
            // Nil when the object or interface is unknown (the generic path ignores the signal).
            guard let replaced = s.objects[path]?[GattCharacteristic1.interface]?.replace("Value", with: value) else { return nil }
            if let old = replaced.previous, !old.hasSameType(as: value) {
                // A property never changes type (see `received(_:)`): the generic path rejects it.
                s.objects[path]?[GattCharacteristic1.interface]?["Value"] = old
                return nil
            }
            return routes
        }
        guard let handlers else { return false }
        for route in handlers { route.handler(data) }
        return true
    }

    /// A PropertiesChanged that changes one property with a basic value (an RSSI update, a
    /// `Connected` or `Notifying` flip, …) and invalidates nothing: read in place into the
    /// event the generic path would decode, without building the `Message`. False for any
    /// other shape (the generic path then takes it).
    func receivedSingleChange(_ view: SignalView) -> Bool {
        guard let path = view.path, let change = view.onlyChangedBasicProperty() else { return false }
        if routedProperty(path: path, interface: change.interface, name: change.name, value: change.value, sender: view.sender) {
            return true
        }
        apply(.propertiesChanged(path, interface: change.interface, changed: [change.name: change.value], invalidated: []),
              sender: view.sender, from: "PropertiesChanged \(path.rawValue) \(change.interface).\(change.name)")
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
