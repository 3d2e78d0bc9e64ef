// ObjectTree: applying signals, following the service's owner, (re)loading.
import DBus

extension ObjectTree {
    // MARK: - Owner

    /// The service's owner changed (owner thread).
    func ownerChanged(_ owner: String?) {
        var batch: [(ObjectTreeEvent, [Handler])] = []
        let load: Int? = state.withLock { s in
            let previous = s.status.owner
            let wasKnown = s.status.ownerKnown
            s.status.ownerKnown = true
            if wasKnown && previous == owner { return nil }
            s.generation += 1
            if previous != nil || !s.objects.isEmpty {
                // Children first, so observers of a device see its GATT objects go before it.
                for path in s.objects.keys.sorted(by: >) {
                    let event = ObjectTreeEvent.interfacesRemoved(path, s.objects[path]!.keys.sorted())
                    s.objects.removeValue(forKey: path)
                    batch.append((event, Self.observers(of: event, in: &s)))
                }
            }
            s.status.loaded = false
            s.status.loadError = nil
            if previous != nil || (!wasKnown && owner == nil) {
                s.status.owner = nil
                let gone = ObjectTreeEvent.ownerChanged(nil)
                batch.append((gone, Self.observers(of: gone, in: &s)))
            }
            s.status.owner = owner
            guard owner != nil else { return nil }
            s.status.everOwned = true
            let event = ObjectTreeEvent.ownerChanged(owner)
            batch.append((event, Self.observers(of: event, in: &s)))
            return s.generation
        }
        BlueZLog.debug("\(service) owner: \(owner ?? "none")")
        deliver(batch)
        if let generation = load { self.load(generation: generation) }
    }

    /// Runs `done` on the owner thread once every signal the bus sent this connection before
    /// now has been applied to the tree (and its observers have run).
    ///
    /// A round trip to the bus daemon (`org.freedesktop.DBus.GetNameOwner` for the service): the
    /// daemon answers after the signals it queued for us earlier, and libdbus dispatches replies
    /// and signals in the order they arrived. Use it before trusting the cached state right after
    /// something outside changed it: when bluetoothd has just restarted, its `NameOwnerChanged`
    /// signals may still be on their way. `done` also runs when the call fails (the connection
    /// closed: nothing more will arrive).
    public func synchronize(_ done: @escaping @Sendable () -> Void) {
        connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                        interface: "org.freedesktop.DBus", member: "GetNameOwner",
                        arguments: [.string(service)], timeout: loadTimeout) { _ in done() }
    }

    /// Sends `GetManagedObjects` for the owner of `generation`.
    func load(generation: Int) {
        connection.bluezCall(path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects",
                             timeout: loadTimeout) { [weak self] result in
            self?.loaded(result, generation: generation)
        }
    }

    private func loaded(_ result: Result<Message, BlueZError>, generation: Int) {
        var batch: [(ObjectTreeEvent, [Handler])] = []
        state.withLock { s in
            guard s.generation == generation else { return }
            switch result {
            case .failure(let error):
                s.status.loadError = error
                let event = ObjectTreeEvent.loadFailed(error)
                batch.append((event, Self.observers(of: event, in: &s)))
            case .success(let reply):
                var snapshot: [ObjectPath: InterfaceProperties] = [:]
                if case .dict(_, _, let entries)? = reply.body.first {
                    for e in entries {
                        guard case .objectPath(let path) = e.key, let ifaces = Self.interfaceMap(e.value) else { continue }
                        snapshot[path] = ifaces
                    }
                } else {
                    BlueZLog.debug("GetManagedObjects: unexpected reply \(reply.signature)")
                }
                // Parents first.
                for path in snapshot.keys.sorted() {
                    let ifaces = snapshot[path]!
                    s.objects[path, default: [:]].merge(ifaces) { _, new in new }
                    let event = ObjectTreeEvent.interfacesAdded(path, ifaces)
                    batch.append((event, Self.observers(of: event, in: &s)))
                }
                s.status.loaded = true
                batch.append((.loaded, Self.observers(of: .loaded, in: &s)))
            }
        }
        deliver(batch)
    }

    // MARK: - Signals

    /// One signal from the service (owner thread).
    func received(_ m: Message) {
        guard let event = Self.event(from: m) else {
            BlueZLog.debug("ObjectTree: ignored \(m)")
            return
        }
        apply(event, sender: m.sender, from: m.description)
    }

    /// Applies one decoded signal from `sender` (owner thread): cache first, then observers.
    /// `signal` describes it for the debug log.
    func apply(_ event: ObjectTreeEvent, sender: String?, from signal: @autoclosure () -> String) {
        var batch: [(ObjectTreeEvent, [Handler])] = []
        var rejected: [String] = []
        state.withLock { s in
            // Before the snapshot arrives, every signal is already reflected in it.
            guard s.status.loaded, let owner = s.status.owner, sender == nil || sender == owner else { return }
            var event = event
            // A BlueZ property never changes type: a property keeps the type it was published
            // with, and a change of another type is bad input that must not replace the good
            // value (nor reach observers).
            if case .propertiesChanged(let path, let interface, let changed, let invalidated) = event,
               let cached = s.objects[path]?[interface],
               changed.contains(where: { name, value in cached[name].map { !$0.hasSameType(as: value) } ?? false }) {
                let kept = changed.filter { name, value in cached[name].map { $0.hasSameType(as: value) } ?? true }
                if kept.count != changed.count {
                    rejected = changed.keys.filter { kept[$0] == nil }.sorted()
                        .map { "\($0): \(changed[$0]!.signature) instead of \(cached[$0]!.signature)" }
                    event = .propertiesChanged(path, interface: interface, changed: kept, invalidated: invalidated)
                }
            }
            switch event {
            case .interfacesAdded(let path, let ifaces):
                s.objects[path, default: [:]].merge(ifaces) { _, new in new }
            case .interfacesRemoved(let path, let names):
                guard s.objects[path] != nil else { return }
                for n in names { s.objects[path]!.removeValue(forKey: n) }
                if s.objects[path]!.isEmpty { s.objects.removeValue(forKey: path) }
            case .propertiesChanged(let path, let interface, let changed, let invalidated):
                guard s.objects[path]?[interface] != nil else { return }
                s.objects[path]![interface]!.merge(changed) { _, new in new }
                for n in invalidated { s.objects[path]![interface]!.removeValue(forKey: n) }
            default:
                return
            }
            batch.append((event, Self.observers(of: event, in: &s)))
        }
        if !rejected.isEmpty { BlueZLog.debug("ObjectTree: ignored wrongly typed properties in \(signal()): \(rejected.joined(separator: ", "))") }
        deliver(batch)
    }

    /// Decodes InterfacesAdded / InterfacesRemoved / PropertiesChanged; nil when malformed.
    static func event(from m: Message) -> ObjectTreeEvent? {
        switch (m.interface, m.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard m.body.count == 2, case .objectPath(let path) = m.body[0], let ifaces = interfaceMap(m.body[1]) else { return nil }
            return .interfacesAdded(path, ifaces)
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard m.body.count == 2, case .objectPath(let path) = m.body[0],
                  let names = try? [String](dbusValue: m.body[1]) else { return nil }
            return .interfacesRemoved(path, names)
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard let path = m.path, m.body.count >= 2, case .string(let interface) = m.body[0],
                  let changed = propertyMap(m.body[1]) else { return nil }
            var invalidated: [String] = []
            if m.body.count > 2, case .array(_, let items) = m.body[2], !items.isEmpty {
                for case .string(let name) in items { invalidated.append(name) }
            }
            return .propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
        default:
            return nil
        }
    }

    /// `a{sa{sv}}` → interfaces; nil when the outer shape is wrong.
    static func interfaceMap(_ v: DBusValue) -> InterfaceProperties? {
        guard case .dict(_, _, let entries) = v.unwrapped else { return nil }
        var out: InterfaceProperties = [:]
        for e in entries {
            guard case .string(let name) = e.key, let props = propertyMap(e.value) else { continue }
            out[name] = props
        }
        return out
    }

    /// `a{sv}` → properties with variants unwrapped.
    static func propertyMap(_ v: DBusValue) -> [String: DBusValue]? {
        guard case .dict(_, _, let entries) = v.unwrapped else { return nil }
        var out: [String: DBusValue] = [:]
        for e in entries {
            guard case .string(let name) = e.key else { continue }
            out[name] = e.value.unwrapped
        }
        return out
    }
}

extension DBusValue {
    /// Whether `other` has the same type (`type == other.type`), without building the types of
    /// scalars and arrays.
    func hasSameType(as other: DBusValue) -> Bool {
        switch (self, other) {
        case (.byte, .byte), (.bool, .bool), (.int16, .int16), (.uint16, .uint16), (.int32, .int32), (.uint32, .uint32),
             (.int64, .int64), (.uint64, .uint64), (.double, .double), (.string, .string), (.objectPath, .objectPath),
             (.signature, .signature), (.unixFD, .unixFD), (.variant, .variant):
            return true
        case (.array(let a, _), .array(let b, _)):
            return a == b
        case (.dict(let k1, let v1, _), .dict(let k2, let v2, _)):
            return k1 == k2 && v1 == v2
        default:
            return type == other.type
        }
    }
}
