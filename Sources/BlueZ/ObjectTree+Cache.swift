// ObjectTree+Cache: the cached objects, and every change a signal makes to them.
import DBus
import Foundation

extension ObjectTree.State {
    // MARK: - Reading

    /// Every object and its interfaces, up to date: the routed `Value` bytes are written
    /// into the cache (as `ay` values) before any read or change of it.
    var objects: [ObjectPath: InterfaceProperties] {
        mutating get {
            writePendingValues()
            return storedObjects
        }
        _modify {
            writePendingValues()
            yield &storedObjects
        }
    }

    /// Writes the bytes the value routes hold into the cached `Value` properties.
    mutating func writePendingValues() {
        guard valuesPending else { return }
        valuesPending = false
        // Walked by index (not `indices`, which would share the storage and make the first
        // change copy the dictionary).
        var i = routes.paths.startIndex
        while i != routes.paths.endIndex {
            if let bytes = routes.paths.values[i].pending {
                routes.paths.values[i].pending = nil
                let value = DBusValue.array(element: .byte, bytes.withUnsafeBytes { $0.map { DBusValue.byte($0) } })
                storedObjects[routes.paths.keys[i]]?[GattCharacteristic1.interface]?["Value"] = value
            }
            routes.paths.formIndex(after: &i)
        }
    }

    // MARK: - Changing

    /// A lone `Value` change of the characteristic at `path`, when the path has value handlers:
    /// the bytes are held by the path's route until the cache is next read or changed (one
    /// lookup by path, no ``DBusValue`` tree); returns the handlers. Nil (the change then takes
    /// the general form, ``cache(_:rejected:)``) when the path has no value handler, or for the
    /// first change since the cache was last read or changed, when the object or interface is
    /// unknown or its `Value` has another type. Later changes replace the held bytes, since
    /// nothing can have changed the cache in between.
    mutating func cacheRoutedValue(_ data: Data, at path: ObjectPath) -> [(id: Int, handler: ObjectTree.ValueHandler)]? {
        guard let slot = routes.paths.index(forKey: path), !routes.paths.values[slot].values.isEmpty else { return nil }
        if routes.paths.values[slot].pending == nil {
            guard let properties = storedObjects[path]?[GattCharacteristic1.interface],
                  ObjectTree.keepsType(properties["Value"], ObjectTree.byteArray) else { return nil }
            valuesPending = true
        }
        routes.paths.values[slot].pending = data
        return routes.paths.values[slot].values
    }

    /// A lone basic change of a routed property (`key`) on `path`: written in place; returns
    /// the cache's own key for the path (so that the handlers' lookups by it compare Strings by
    /// identity). Nil (the change then takes the general form) when the object or interface is
    /// unknown, or the value has another type than the cached one.
    mutating func cacheRoutedProperty(_ key: ObjectTreeRoutes.PropertyKey, _ value: DBusValue, at path: ObjectPath) -> ObjectPath? {
        writePendingValues()
        guard let i = storedObjects.index(forKey: path),
              let replaced = storedObjects.values[i][key.interface]?.replace(key.name, with: value) else { return nil }
        guard ObjectTree.keepsType(replaced.previous, value) else {
            storedObjects.values[i][key.interface]?[key.name] = replaced.previous
            return nil
        }
        return storedObjects.keys[i]
    }

    /// Applies a general event to the cache; returns it as applied (its wrongly typed changes
    /// left out and named in `rejected`), nil when the cache ignores it (a change of an unknown
    /// object or interface, a removal of an unknown object).
    mutating func cache(_ event: ObjectTreeEvent, rejected: inout [String]) -> ObjectTreeEvent? {
        switch event {
        case .interfacesAdded(let path, let ifaces):
            objects[path, default: [:]].merge(ifaces) { _, new in new }
            return event
        case .interfacesRemoved(let path, let names):
            guard objects[path] != nil else { return nil }
            for n in names { objects[path]!.removeValue(forKey: n) }
            if objects[path]!.isEmpty { objects.removeValue(forKey: path) }
            return event
        case .propertiesChanged(let path, let interface, var changed, let invalidated):
            guard let cached = objects[path]?[interface] else { return nil }
            let wrong = changed.filter { !ObjectTree.keepsType(cached[$0.key], $0.value) }
            if !wrong.isEmpty {
                rejected = wrong.keys.sorted().map { "\($0): \(wrong[$0]!.signature) instead of \(cached[$0]!.signature)" }
                for name in wrong.keys { changed.removeValue(forKey: name) }
            }
            objects[path]![interface]!.merge(changed) { _, new in new }
            for n in invalidated { objects[path]![interface]!.removeValue(forKey: n) }
            return wrong.isEmpty ? event : .propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
        default:
            return nil
        }
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
