// ObjectTreeRoutes: every observer of an ObjectTree, by where it listens (the whole tree, one path,
// a subtree) and what it takes (events, lone `Value` bytes, one property's lone changes).
import DBus
import Foundation

/// The observers of an ``ObjectTree``, in one structure: each is registered with a scope (the
/// whole tree, one path, or a subtree) and a target (every event, a characteristic's lone
/// `Value` changes, or one property's lone changes on any object), and a signal finds its
/// observers by its path. Guarded by the tree's lock, like the rest of its `State`.
///
/// Per path, one slot holds both the path's event observers and its value handlers (with the
/// bytes of the latest routed change not yet in the cache, see
/// `ObjectTree.State.writePendingValues()`). Property routes are tree-wide and keyed by
/// property, found by comparing a change's names in place; they need no lookup by path.
struct ObjectTreeRoutes {
    typealias Handler = ObjectTree.Handler
    typealias ValueHandler = ObjectTree.ValueHandler
    typealias PropertyHandler = ObjectTree.PropertyHandler

    /// Where an observer listens.
    enum Scope {
        /// Every object, and the tree's own events.
        case tree
        /// One object.
        case path(ObjectPath)
        /// An object and every object below it.
        case subtree(ObjectPath)
    }

    /// What an observer takes.
    enum Target {
        /// Every event of its scope.
        case events(Handler)
        /// The lone `Value` changes of the characteristic at its path (scope `.path`).
        case values(ValueHandler)
        /// The lone changes of one property, on any object (scope `.tree`).
        case property(PropertyKey, PropertyHandler)

        /// What it takes, without the handler.
        var kind: Kind {
            switch self {
            case .events: .events
            case .values: .values
            case .property(let key, _): .property(key)
            }
        }
    }

    /// A target without its handler (what removing an observer needs).
    enum Kind {
        case events, values, property(PropertyKey)
    }

    /// A property route's key: an interface and one of its properties.
    struct PropertyKey: Hashable {
        let interface: String
        let name: String
    }

    /// The observers of one path, and its routed `Value` bytes.
    struct PathSlot {
        var events: [Int: Handler] = [:]
        var values: [(id: Int, handler: ValueHandler)] = []
        /// The bytes of the latest routed `Value` change, not yet in the cache. Only set while
        /// the cache has the characteristic's interface with no `Value` or an `ay` one, and the
        /// cache has not been read or changed since (every access writes them first).
        var pending: Data?

        var isEmpty: Bool { events.isEmpty && values.isEmpty && pending == nil }
    }

    // MARK: - Registrations

    /// Tree-wide event observers.
    var tree: [Int: Handler] = [:]
    /// Tree-wide property routes.
    var properties: [PropertyKey: [(id: Int, handler: PropertyHandler)]] = [:]
    /// Per-path observers and value handlers.
    var paths: [ObjectPath: PathSlot] = [:]
    /// Subtree observers, by the subtree's root.
    var subtrees: [ObjectPath: [Int: Handler]] = [:]
    /// Every event observer of a path (tree, exact and subtree observers), computed on the
    /// path's first event and reused until an event observer comes or goes; bounded.
    private var resolved: [ObjectPath: [Handler]] = [:]

    /// The most paths whose observers are remembered before the cache starts over.
    static let resolvedLimit = 4096

    /// Adds observer `id`.
    mutating func add(_ id: Int, _ scope: Scope, _ target: Target) {
        switch (scope, target) {
        case (.tree, .events(let h)): tree[id] = h
        case (.path(let p), .events(let h)): paths[p, default: PathSlot()].events[id] = h
        case (.subtree(let p), .events(let h)): subtrees[p, default: [:]][id] = h
        case (.path(let p), .values(let h)): paths[p, default: PathSlot()].values.append((id, h))
        case (.tree, .property(let key, let h)): properties[key, default: []].append((id, h))
        default: preconditionFailure("no such route")
        }
        if case .events = target { resolved.removeAll(keepingCapacity: true) }
    }

    /// Removes observer `id`, registered with `scope` and a target of `kind`. A path's routed
    /// bytes must be in the cache before its last value handler goes.
    mutating func remove(_ id: Int, _ scope: Scope, _ kind: Kind) {
        switch (scope, kind) {
        case (.tree, .events): tree.removeValue(forKey: id)
        case (.path(let p), .events): paths[p]?.events.removeValue(forKey: id)
        case (.subtree(let p), .events):
            subtrees[p]?.removeValue(forKey: id)
            if subtrees[p]?.isEmpty == true { subtrees.removeValue(forKey: p) }
        case (.path(let p), .values): paths[p]?.values.removeAll { $0.id == id }
        case (.tree, .property(let key)):
            properties[key]?.removeAll { $0.id == id }
            if properties[key]?.isEmpty == true { properties.removeValue(forKey: key) }
        default: break
        }
        if case .path(let p) = scope, paths[p]?.isEmpty == true { paths.removeValue(forKey: p) }
        if case .events = kind { resolved.removeAll(keepingCapacity: true) }
    }

    // MARK: - Routing

    /// The event observers of an event about `path` (nil: the tree's own events): for a path,
    /// one dictionary lookup once the path's observers are known.
    mutating func observers(of path: ObjectPath?) -> [Handler] {
        guard let path else { return Array(tree.values) }
        if let known = resolved[path] { return known }
        let found = resolve(path)
        if resolved.count >= Self.resolvedLimit { resolved.removeAll(keepingCapacity: true) }
        resolved[path] = found
        return found
    }

    /// The property route `matches` picks among the routed properties (no String made for a
    /// change's names: `matches` compares them in place).
    func propertyRoute(_ matches: (PropertyKey) -> Bool) -> (key: PropertyKey, handlers: [(id: Int, handler: PropertyHandler)])? {
        guard !properties.isEmpty, let (key, handlers) = properties.first(where: { matches($0.key) }) else { return nil }
        return (key, handlers)
    }

    /// Tree observers, then exact, then subtrees from the path itself up to the root.
    private func resolve(_ path: ObjectPath) -> [Handler] {
        var out = Array(tree.values)
        if let exact = paths[path]?.events, !exact.isEmpty { out.append(contentsOf: exact.values) }
        guard !subtrees.isEmpty else { return out }
        var p: String = path.rawValue
        while true {
            if let sub = subtrees[ObjectPath(unsafe: p)] { out.append(contentsOf: sub.values) }
            guard let slash = p.lastIndex(of: "/"), p != "/" else { break }
            p = slash == p.startIndex ? "/" : String(p[..<slash])
        }
        return out
    }
}

extension ObjectPath {
    /// A path known to be valid (an ancestor of a valid path).
    init(unsafe text: String) { self = (try? ObjectPath(text)) ?? .root }
}
