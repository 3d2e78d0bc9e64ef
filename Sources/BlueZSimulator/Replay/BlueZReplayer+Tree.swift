// BlueZReplayer+Tree: the recorded object tree on the bus, kept current by the replayed signals.
import DBus

// MARK: - Exports

extension BlueZReplayer {
    /// Exports `/` (the object manager) and every object of the tree at the start (on `queue`).
    func exportAll() {
        let manager = DBusInterface(name: "org.freedesktop.DBus.ObjectManager", methods: [
            DBusMethod("GetManagedObjects", output: "a{oa{sa{sv}}}") { [weak self] _, responder in
                guard let self else { return }
                self.queue.async { responder.succeed([self.managedObjects()]) }
            },
        ], signals: [DBusSignalInfo("InterfacesAdded", signature: "oa{sa{sv}}"), DBusSignalInfo("InterfacesRemoved", signature: "oas")])
        if let root = try? connection.export([manager] + definitions("/"), at: .root) { handles["/"] = root }
        for path in tree.keys.sorted() where path != "/" { export(path) }
    }

    /// The tree as `GetManagedObjects` returns it.
    func managedObjects() -> DBusValue {
        .dict(key: .objectPath, value: .dict(key: .string, value: .dict(key: .string, value: .variant)),
              tree.keys.sorted().compactMap { path in
                  guard path != "/", let op = try? ObjectPath(path) else { return nil }
                  let ifaces = tree[path] ?? [:]
                  return .init(.objectPath(op), .dict(key: .string, value: .dict(key: .string, value: .variant),
                                                      ifaces.keys.sorted().map { .init(.string($0), .properties(ifaces[$0] ?? [:])) }))
              })
    }

    /// The interfaces of `path` now: its properties and the methods the recording calls on it.
    private func definitions(_ path: String) -> [DBusInterface] {
        let names = Set((tree[path] ?? [:]).keys).union((methodTable[path] ?? [:]).keys)
        // The standard interfaces are the D-Bus module's own on every export.
        return names.filter { !$0.hasPrefix("org.freedesktop.DBus.") }.sorted().map { definition(path, $0) }
    }

    private func definition(_ path: String, _ interface: String) -> DBusInterface {
        let known = BlueZMethodSignatures.table[interface] ?? [:]
        let recorded = methodTable[path]?[interface] ?? [:]
        let methods = known.merging(recorded) { _, new in new }.map { member, signatures in
            DBusMethod(member, input: signatures.0, output: signatures.1) { [weak self] call, responder in
                guard let self else { return }
                self.queue.async { self.answer(call, responder) }
            }
        }
        let properties = (tree[path]?[interface] ?? [:]).sorted { $0.key < $1.key }.map { name, value in
            DBusProperty(name, type: value.type, access: .readWrite, value: value, emitsChanged: false) { [weak self] new, call throws(DBusRemoteError) in
                try self?.propertySet(path, interface, name, new, call)
            }
        }
        return DBusInterface(name: interface, methods: methods, properties: properties)
    }

    /// Exports `path` as the tree has it (replacing an earlier export).
    private func export(_ path: String) {
        guard path != "/", let op = try? ObjectPath(path) else { return }
        handles.removeValue(forKey: path)?.unexport()
        if let handle = try? connection.export(definitions(path), at: op) { handles[path] = handle }
    }

    /// Exports again the interfaces of `path` that changed, atomically for callers.
    private func refresh(_ path: String, _ interfaces: [String]) {
        guard let handle = handles[path] else { return export(path) }
        let defs = interfaces.filter { !$0.hasPrefix("org.freedesktop.DBus.") }.map { definition(path, $0) }
        connection.execute {
            for d in defs {
                handle.removeInterface(d.name)
                try? handle.addInterface(d)
            }
        }
    }

    // MARK: Signals

    /// Applies a recorded signal to the tree (exports follow), then sends it as recorded.
    func send(_ m: ScenarioMessage, index: Int) {
        switch (m.interface, m.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            if m.arguments.count == 2, case .objectPath(let op) = m.arguments[0], case .dict(_, _, let entries) = m.arguments[1] {
                for e in entries {
                    guard case .string(let name) = e.key, case .dict(_, _, let props) = e.value else { continue }
                    tree[op.rawValue, default: [:]][name] = Self.properties(props)
                }
                handles[op.rawValue] == nil ? export(op.rawValue) : refresh(op.rawValue, entries.compactMap { if case .string(let n) = $0.key { n } else { nil } })
            }
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            if m.arguments.count == 2, case .objectPath(let op) = m.arguments[0], case .array(_, let names) = m.arguments[1] {
                for case .string(let n) in names { tree[op.rawValue]?[n] = nil }
                if tree[op.rawValue]?.isEmpty ?? true {
                    tree[op.rawValue] = nil
                    if methodTable[op.rawValue] == nil { handles.removeValue(forKey: op.rawValue)?.unexport() } else { export(op.rawValue) }
                } else {
                    export(op.rawValue)
                }
            }
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            if m.arguments.count >= 2, case .string(let iface) = m.arguments[0], case .dict(_, _, let changed) = m.arguments[1] {
                for (k, v) in Self.properties(changed) { tree[m.path, default: [:]][iface, default: [:]][k] = v }
                if m.arguments.count == 3, case .array(_, let gone) = m.arguments[2] {
                    for case .string(let k) in gone { tree[m.path]?[iface]?[k] = nil }
                }
                refresh(m.path, [iface])
            }
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            // The bus sends this one itself: played as a restart of bluetoothd.
            if m.arguments.count == 3, case .string(let owner) = m.arguments[2] { owner.isEmpty ? bluetoothdExits() : bluetoothdStarts(after: index) }
            return
        default: break
        }
        guard let op = try? ObjectPath(m.path) else { return }
        try? connection.emitSignal(path: op, interface: m.interface, member: m.member, arguments: m.arguments)
    }

    private static func properties(_ entries: [DBusValue.DictEntry]) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        for e in entries {
            guard case .string(let k) = e.key else { continue }
            if case .variant(let v) = e.value { out[k] = v } else { out[k] = e.value }
        }
        return out
    }
}
