// Exporting objects, and the handle that controls one exported object.

/// One exported object. `unexport()` (or releasing the handle) removes it and emits
/// `InterfacesRemoved` from its object manager.
public final class ExportHandle: Sendable {
    let core: ConnectionCore
    /// The object's path.
    public let path: ObjectPath
    let token: Int

    init(core: ConnectionCore, path: ObjectPath, token: Int) {
        self.core = core
        self.path = path
        self.token = token
    }

    deinit { unexport() }

    /// Removes the object; emits `InterfacesRemoved`. Idempotent.
    public func unexport() {
        let removed = core.exports.withLock { table -> (names: [String], manager: String?)? in
            guard let o = table.objects[path.rawValue], o.token == token else { return nil }
            table.objects.removeValue(forKey: path.rawValue)
            return (o.order, table.manager(for: path.rawValue))
        }
        if let removed, let manager = removed.manager, !removed.names.isEmpty {
            core.emitInterfacesRemoved(manager: manager, path: path, names: removed.names)
        }
    }

    /// The only unique name allowed to call the object (nil: anyone). Others get `AccessDenied`.
    public var allowedCaller: String? {
        get { core.exports.withLock { $0.objects[path.rawValue].flatMap { $0.token == token ? $0.allowedCaller : nil } } }
        set { core.exports.withLock { if $0.objects[path.rawValue]?.token == token { $0.objects[path.rawValue]!.allowedCaller = newValue } } }
    }

    /// The stored value of a property.
    public func property(_ name: String, interface: String) -> DBusValue? {
        core.exports.withLock { $0.objects[path.rawValue]?.interfaces[interface]?.values[name] }
    }

    /// Stores property values and emits one `PropertiesChanged` for those that emit changes.
    public func setProperties(_ values: [String: DBusValue], interface: String) throws(DBusExportError) {
        let changed = try core.exports.withLock { table throws(DBusExportError) -> [String: DBusValue] in
            guard var object = table.objects[path.rawValue], object.token == token else {
                throw DBusExportError(message: "\(path) is not exported")
            }
            guard var iface = object.interfaces[interface] else {
                throw DBusExportError(message: "\(path) has no interface \(interface)")
            }
            var emitted: [String: DBusValue] = [:]
            for (name, value) in values {
                guard let p = iface.properties[name] else { throw DBusExportError(message: "\(interface) has no property \(name)") }
                guard value.matches(p.type) else {
                    throw DBusExportError(message: "\(interface).\(name) has type \(p.type), got \(value.signature)")
                }
                iface.values[name] = value
                if p.emitsChanged { emitted[name] = value }
            }
            object.interfaces[interface] = iface
            table.objects[path.rawValue] = object
            return emitted
        }
        if !changed.isEmpty { try? Connection.emitPropertiesChanged(core, path: path, interface: interface, changed: changed) }
    }

    /// Stores one property value and emits `PropertiesChanged`.
    public func setProperty(_ name: String, _ value: DBusValue, interface: String) throws(DBusExportError) {
        try setProperties([name: value], interface: interface)
    }

    /// Adds an interface to the object; emits `InterfacesAdded`.
    public func addInterface(_ interface: DBusInterface) throws(DBusExportError) {
        let manager = try core.exports.withLock { table throws(DBusExportError) -> String? in
            guard var object = table.objects[path.rawValue], object.token == token else {
                throw DBusExportError(message: "\(path) is not exported")
            }
            guard object.interfaces[interface.name] == nil else {
                throw DBusExportError(message: "\(path) already has \(interface.name)")
            }
            object.interfaces[interface.name] = InterfaceState(interface)
            object.order.append(interface.name)
            table.objects[path.rawValue] = object
            return table.manager(for: path.rawValue)
        }
        if let manager {
            core.emitInterfacesAdded(manager: manager, path: path,
                                     interfaces: [(interface.name, InterfaceState(interface).readableValues())])
        }
    }

    /// Removes an interface from the object; emits `InterfacesRemoved`.
    public func removeInterface(_ name: String) {
        let manager = core.exports.withLock { table -> String?? in
            guard var object = table.objects[path.rawValue], object.token == token,
                  object.interfaces.removeValue(forKey: name) != nil else { return nil }
            object.order.removeAll { $0 == name }
            table.objects[path.rawValue] = object
            return .some(table.manager(for: path.rawValue))
        }
        if case .some(.some(let m)) = manager { core.emitInterfacesRemoved(manager: m, path: path, names: [name]) }
    }
}

extension Connection {
    /// Exports an object implementing `interfaces` at `path`, with the built-in Properties,
    /// Introspectable and Peer interfaces. Emits `InterfacesAdded` from the nearest object
    /// manager above `path`. `allowedCaller` restricts calls to one unique name.
    public func export(_ interfaces: [DBusInterface], at path: ObjectPath, allowedCaller: String? = nil) throws(DBusExportError) -> ExportHandle {
        try core.export(interfaces, at: path, allowedCaller: allowedCaller, objectManager: false)
    }

    /// Exports `org.freedesktop.DBus.ObjectManager` at `path` (GetManagedObjects over every
    /// object below it; InterfacesAdded/InterfacesRemoved emitted as objects come and go).
    public func exportObjectManager(at path: ObjectPath, allowedCaller: String? = nil) throws(DBusExportError) -> ExportHandle {
        try core.export([], at: path, allowedCaller: allowedCaller, objectManager: true)
    }

    static func emitPropertiesChanged(_ core: ConnectionCore, path: ObjectPath, interface: String, changed: [String: DBusValue]) throws(DBusCallError) {
        let m = try MessageBuilder.signal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string(interface), .properties(changed), .array(element: .string, [])], destination: nil)
        core.send(m)
    }
}

extension ConnectionCore {
    func export(_ interfaces: [DBusInterface], at path: ObjectPath, allowedCaller: String?, objectManager: Bool) throws(DBusExportError) -> ExportHandle {
        for i in interfaces {
            guard LibDBus.isValidInterface(i.name) else { throw DBusExportError(message: "invalid interface name \(i.name)") }
            for p in i.properties where !p.value.matches(p.type) {
                throw DBusExportError(message: "\(i.name).\(p.name) has type \(p.type), initial value is \(p.value.signature)")
            }
        }
        let (token, manager) = try exports.withLock { table throws(DBusExportError) -> (Int, String?) in
            if var existing = table.objects[path.rawValue] {
                // An object manager and an object may share a path.
                if objectManager, !existing.isObjectManager {
                    existing.isObjectManager = true
                    table.objects[path.rawValue] = existing
                    return (existing.token, nil)
                }
                throw DBusExportError(message: "\(path) is already exported")
            }
            let token = table.nextToken
            table.nextToken += 1
            var state = ExportedObjectState(allowedCaller: allowedCaller, isObjectManager: objectManager, token: token)
            for i in interfaces where state.interfaces[i.name] == nil {
                state.interfaces[i.name] = InterfaceState(i)
                state.order.append(i.name)
            }
            table.objects[path.rawValue] = state
            return (token, table.manager(for: path.rawValue))
        }
        if let manager, !interfaces.isEmpty {
            emitInterfacesAdded(manager: manager, path: path,
                                interfaces: interfaces.map { ($0.name, InterfaceState($0).readableValues()) })
        }
        return ExportHandle(core: self, path: path, token: token)
    }

    func emitInterfacesAdded(manager: String, path: ObjectPath, interfaces: [(String, [String: DBusValue])]) {
        let dict = DBusValue.dict(key: .string, value: .dict(key: .string, value: .variant),
                                  interfaces.map { .init(.string($0.0), .properties($0.1)) })
        if let m = try? MessageBuilder.signal(path: ObjectPath(unchecked: manager), interface: "org.freedesktop.DBus.ObjectManager",
                                              member: "InterfacesAdded", arguments: [.objectPath(path), dict], destination: nil) {
            send(m)
        }
    }

    func emitInterfacesRemoved(manager: String, path: ObjectPath, names: [String]) {
        if let m = try? MessageBuilder.signal(path: ObjectPath(unchecked: manager), interface: "org.freedesktop.DBus.ObjectManager",
                                              member: "InterfacesRemoved",
                                              arguments: [.objectPath(path), .array(element: .string, names.map { .string($0) })],
                                              destination: nil) {
            send(m)
        }
    }
}
