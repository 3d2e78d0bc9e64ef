// ObjectTree+Loading: following the service's owner and (re)loading the tree from
// GetManagedObjects.
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
                    batch.append((event, s.routes.observers(of: event.path)))
                }
            }
            s.status.loaded = false
            s.status.loadError = nil
            if previous != nil || (!wasKnown && owner == nil) {
                s.status.owner = nil
                let gone = ObjectTreeEvent.ownerChanged(nil)
                batch.append((gone, s.routes.observers(of: nil)))
            }
            s.status.owner = owner
            guard owner != nil else { return nil }
            s.status.everOwned = true
            let event = ObjectTreeEvent.ownerChanged(owner)
            batch.append((event, s.routes.observers(of: event.path)))
            return s.generation
        }
        BlueZLog.debug("\(service) owner: \(owner ?? "none")")
        deliver(.events(batch))
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
                batch.append((event, s.routes.observers(of: event.path)))
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
                    batch.append((event, s.routes.observers(of: event.path)))
                }
                s.status.loaded = true
                batch.append((.loaded, s.routes.observers(of: nil)))
            }
        }
        deliver(.events(batch))
    }
}
