// ObjectTree+Observers: who is told about an event, and telling them (observer registry, the
// per-path route cache, delivery without the lock).
@_spi(Testing) import DBus

extension ObjectTree {
    // MARK: - Observing

    /// Calls `handler` with every event of the tree.
    public func observe(_ handler: @escaping @Sendable (ObjectTreeEvent) -> Void) -> ObjectTreeObservation {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.treeObservers[s.nextID] = handler
            s.observersChanged()
            return s.nextID
        }
        return ObjectTreeObservation { [weak self] in
            self?.state.withLock { s in
                _ = s.treeObservers.removeValue(forKey: id)
                s.observersChanged()
            }
        }
    }

    /// Calls `handler` with the events about `path` itself.
    public func observe(path: ObjectPath, _ handler: @escaping @Sendable (ObjectTreeEvent) -> Void) -> ObjectTreeObservation {
        register(path, subtree: false, handler)
    }

    /// Calls `handler` with the events about `root` and every object below it.
    public func observe(subtree root: ObjectPath, _ handler: @escaping @Sendable (ObjectTreeEvent) -> Void) -> ObjectTreeObservation {
        register(root, subtree: true, handler)
    }

    private func register(_ path: ObjectPath, subtree: Bool, _ handler: @escaping Handler) -> ObjectTreeObservation {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            if subtree { s.subtreeObservers[path, default: [:]][s.nextID] = handler }
            else { s.pathObservers[path, default: [:]][s.nextID] = handler }
            s.observersChanged()
            return s.nextID
        }
        return ObjectTreeObservation { [weak self] in
            self?.state.withLock { s in
                if subtree {
                    s.subtreeObservers[path]?.removeValue(forKey: id)
                    if s.subtreeObservers[path]?.isEmpty == true { s.subtreeObservers.removeValue(forKey: path) }
                } else {
                    s.pathObservers[path]?.removeValue(forKey: id)
                    if s.pathObservers[path]?.isEmpty == true { s.pathObservers.removeValue(forKey: path) }
                }
                s.observersChanged()
            }
        }
    }

    /// The observers of `event` (under the lock): for a path, one dictionary lookup once the
    /// path's route is known.
    static func observers(of event: ObjectTreeEvent, in s: inout State) -> [Handler] {
        guard let path = event.path else { return Array(s.treeObservers.values) }
        if let route = s.routes[path] { return route }
        let route = computeObservers(of: path, in: s)
        if s.routes.count >= routeCacheLimit { s.routes.removeAll(keepingCapacity: true) }
        s.routes[path] = route
        return route
    }

    /// The observers of an event about `path`: tree observers, then exact, then subtrees from
    /// the path itself up to the root.
    static func computeObservers(of path: ObjectPath, in s: State) -> [Handler] {
        var out = Array(s.treeObservers.values)
        if let exact = s.pathObservers[path] { out.append(contentsOf: exact.values) }
        guard !s.subtreeObservers.isEmpty else { return out }
        var p: String = path.rawValue
        while true {
            if let sub = s.subtreeObservers[ObjectPath(unsafe: p)] { out.append(contentsOf: sub.values) }
            guard let slash = p.lastIndex(of: "/"), p != "/" else { break }
            p = slash == p.startIndex ? "/" : String(p[..<slash])
        }
        return out
    }

    /// Runs the observers of each event, in order, without the lock.
    func deliver(_ batch: [(ObjectTreeEvent, [Handler])]) {
        for (event, handlers) in batch {
            for h in handlers {
                PathWorkProbe.visit()
                h(event)
            }
        }
    }
}

extension ObjectPath {
    /// A path known to be valid (an ancestor of a valid path).
    init(unsafe text: String) { self = (try? ObjectPath(text)) ?? .root }
}
