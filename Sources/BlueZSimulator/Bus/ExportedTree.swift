// ExportedTree: mirrors the model's object tree onto a DBus connection and emits the signals.

import DBus

// MARK: - ExportedTree

/// Keeps one exported object per model object and sends each `ObjectEvent` as its D-Bus signal.
///
/// The DBus module's exports fix an interface's property names at export time, while BlueZ's
/// properties come and go (RSSI, TxPower, Name, Value…). So objects are exported WITHOUT the
/// module's object manager (exports and removals are then silent), signals are emitted here,
/// `GetManagedObjects` is served from the model, and when an interface's property set changes the
/// interface is swapped on the owner thread (atomic with respect to incoming Get/GetAll).
/// Used on the simulator's queue only.
final class ExportedTree {
    let connection: Connection
    private var handles: [String: ExportHandle] = [:]
    private var declared: [String: [String: Set<String>]] = [:]
    /// Methods of an interface at a path.
    private let methods: (String, String) -> [DBusMethod]
    /// Setter for a writable property (interface, property, path), nil for read-only ones.
    private let setter: (String, String, String) -> (@Sendable (DBusValue, MethodCall) throws(DBusRemoteError) -> Void)?

    init(connection: Connection,
         methods: @escaping (String, String) -> [DBusMethod],
         setter: @escaping (String, String, String) -> (@Sendable (DBusValue, MethodCall) throws(DBusRemoteError) -> Void)?) {
        self.connection = connection
        self.methods = methods
        self.setter = setter
    }

    private func definition(_ interface: String, path: String, properties: [String: PropertyValue]) -> DBusInterface {
        DBusInterface(name: interface, methods: methods(interface, path), properties: properties.map { name, value in
            let set = setter(interface, name, path)
            return DBusProperty(name, type: value.dbusType, access: set == nil ? .read : .readWrite, value: value.dbus,
                                emitsChanged: false, setter: set)
        })
    }

    /// Exports an object that is not part of the BlueZ tree (e.g. `/`, `/org/bluecap/simulator`).
    func exportStatic(_ path: String, _ interfaces: [DBusInterface]) throws {
        handles[path] = try connection.export(interfaces, at: ObjectPath(path))
    }

    /// Applies one model event: exports/unexports/updates, then emits the matching signal.
    func apply(_ event: ObjectEvent, store: ObjectStore) {
        switch event {
        case .interfacesAdded(let path, let ifaces):
            guard let op = try? ObjectPath(path) else { return }
            let defs = ifaces.keys.sorted().map { definition($0, path: path, properties: ifaces[$0] ?? [:]) }
            if let handle = handles[path] {
                for d in defs {
                    handle.removeInterface(d.name)
                    try? handle.addInterface(d)
                }
            } else if let handle = try? connection.export(defs, at: op) {
                handles[path] = handle
            }
            for (name, props) in ifaces { declared[path, default: [:]][name] = Set(props.keys) }
            try? connection.emitSignal(path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                                       arguments: [.objectPath(op), ifaces.dbus])
        case .interfacesRemoved(let path, let names):
            guard let op = try? ObjectPath(path) else { return }
            if store.contains(path) {
                for n in names { handles[path]?.removeInterface(n); declared[path]?[n] = nil }
            } else {
                handles.removeValue(forKey: path)?.unexport()
                declared[path] = nil
            }
            try? connection.emitSignal(path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
                                       arguments: [.objectPath(op), .array(element: .string, names.map { .string($0) })])
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            guard let op = try? ObjectPath(path), let handle = handles[path] else { return }
            let current = store.properties(path, interface) ?? [:]
            if declared[path]?[interface] == Set(current.keys) {
                try? handle.setProperties(changed.mapValues(\.dbus), interface: interface)
            } else {
                declared[path, default: [:]][interface] = Set(current.keys)
                let def = definition(interface, path: path, properties: current)
                connection.execute {
                    handle.removeInterface(interface)
                    try? handle.addInterface(def)
                }
            }
            try? connection.emitPropertiesChanged(path: op, interface: interface, changed: changed.mapValues(\.dbus),
                                                  invalidated: invalidated)
        }
    }

    /// Stores a property value without a signal (after Properties.Set stored the caller's value).
    func resync(_ path: String, _ interface: String, _ name: String, _ value: PropertyValue) {
        guard let handle = handles[path] else { return }
        connection.execute { try? handle.setProperties([name: value.dbus], interface: interface) }
    }

    /// Unexports everything silently.
    func clear() {
        for h in handles.values { h.unexport() }
        handles.removeAll()
        declared.removeAll()
    }
}
