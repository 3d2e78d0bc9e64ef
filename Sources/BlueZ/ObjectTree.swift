// ObjectTree: a cache of org.bluez's objects, kept current from three broad match rules.
import DBus
import Foundation
import Locking

/// The objects a service (bluetoothd, `org.bluez`) exports, cached per connection.
///
/// Fed by `org.freedesktop.DBus.ObjectManager.GetManagedObjects`, then `InterfacesAdded`,
/// `InterfacesRemoved` and `org.freedesktop.DBus.Properties.PropertiesChanged`. It uses three
/// match rules in all, however many objects exist: ObjectManager signals from the service,
/// PropertiesChanged from the service, and `NameOwnerChanged` for the service's name. Each signal
/// is decoded once into a ``TreeSignal``, checked, applied to the cache and routed by its path
/// once (``ObjectTreeRoutes``: observers of the whole tree, of an exact path, of a subtree by
/// walking the path's few ancestors, and the lone-change routes of a characteristic's `Value`
/// or of one property).
///
/// The rules are added before `GetManagedObjects` is sent, so no change is lost; signals that
/// arrive before its reply are already reflected in it and are dropped. When the service leaves
/// the bus the tree is emptied (observers see every object removed, then `.ownerChanged(nil)`);
/// when a new owner appears it is loaded again.
///
/// Observers run on the connection's owner thread, in signal order, without any lock held; they
/// must not block.
public final class ObjectTree: Sendable {
    /// What is known about the service.
    public struct Status: Sendable, Equatable {
        /// False until the first `GetNameOwner` answer.
        public var ownerKnown = false
        /// The service's unique name, nil when it is not on the bus.
        public var owner: String?
        /// Whether the service has had an owner at some point since the tree started.
        public var everOwned = false
        /// Whether the current owner's objects are loaded.
        public var loaded = false
        /// Why the last `GetManagedObjects` failed, if it did.
        public var loadError: BlueZError?
    }

    typealias Handler = @Sendable (ObjectTreeEvent) -> Void
    typealias ValueHandler = @Sendable (Data) -> Void
    typealias PropertyHandler = @Sendable (ObjectPath, DBusValue) -> Void

    /// What ``state``'s lock guards: the service's status, the cached objects (read and changed
    /// through ObjectTree+Cache), and the observers (``ObjectTreeRoutes``).
    struct State {
        var status = Status()
        /// The objects as last written; read and change them through `objects`, which first
        /// writes the routed values the routes still hold (`writePendingValues()`).
        var storedObjects: [ObjectPath: InterfaceProperties] = [:]
        var generation = 0
        /// Every observer, and the `Value` bytes routed to value handlers but not yet cached.
        var routes = ObjectTreeRoutes()
        var nextID = 0
        /// Whether some path's route holds bytes not yet written to `storedObjects`.
        var valuesPending = false
    }

    /// The connection the tree reads.
    public let connection: Connection
    /// The service's well-known name.
    public let service: String
    /// How long `GetManagedObjects` may take.
    public let loadTimeout: Duration
    let state = Locked(State())
    private let handles = Locked<[AnyObject]>([])

    // MARK: - Creating

    private static let registry = Locked<[ObjectIdentifier: WeakTree]>([:])
    private struct WeakTree { weak var tree: ObjectTree? }

    /// The tree of `org.bluez` for `connection`, created and started on first use; every caller
    /// with the same connection shares it (one set of match rules per connection).
    public static func shared(for connection: Connection) -> ObjectTree {
        let key = ObjectIdentifier(connection)
        let (tree, created) = registry.withLock { reg -> (ObjectTree, Bool) in
            if let t = reg[key]?.tree { return (t, false) }
            reg = reg.filter { $0.value.tree != nil }
            let t = ObjectTree(connection: connection)
            reg[key] = WeakTree(tree: t)
            return (t, true)
        }
        if created { tree.start() }
        return tree
    }

    /// A tree of `service` on `connection`; call ``start()`` to begin. Prefer ``shared(for:)``.
    public init(connection: Connection, service: String = bluezBusName, loadTimeout: Duration = .seconds(25)) {
        self.connection = connection
        self.service = service
        self.loadTimeout = loadTimeout
    }

    /// Subscribes (three match rules) and starts tracking the service's owner. Call once.
    /// PropertiesChanged signals of a lone shape are read in place (the `peek`); the others are
    /// decoded (ObjectTree+Signals).
    public func start() {
        let objectManager = connection.subscribe(rule: MatchRule(
            sender: service, interface: "org.freedesktop.DBus.ObjectManager")) { [weak self] m in self?.received(m) }
        let properties = connection.subscribe(rule: MatchRule(
            sender: service, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
            peek: { [weak self] view in self?.received(view) ?? false }) { [weak self] m in
            self?.received(m)
        }
        // Sent after the AddMatch calls on the same connection: the bus has applied the rules
        // before it answers GetNameOwner, so GetManagedObjects (sent after) misses nothing.
        let watch = connection.watchNameOwner(service) { [weak self] owner in self?.ownerChanged(owner) }
        handles.withLock { $0 = [objectManager, properties, watch] }
    }

    /// Stops tracking (match rules removed). The cached objects stay as they were.
    public func stop() {
        let hs = handles.withLock { h -> [AnyObject] in defer { h = [] }; return h }
        for h in hs {
            (h as? SignalSubscription)?.cancel()
            (h as? NameOwnerWatch)?.cancel()
        }
    }

    deinit { stop() }

    // MARK: - Reading

    /// The service's status.
    public var status: Status { state.withLock { $0.status } }

    /// Every object and its interfaces.
    public var objects: [ObjectPath: InterfaceProperties] { state.withLock { $0.objects } }

    /// The interfaces of `path`, nil when it does not exist.
    public func interfaces(at path: ObjectPath) -> InterfaceProperties? { state.withLock { $0.objects[path] } }

    /// The properties of `interface` on `path`, nil when the object lacks it.
    public func properties(at path: ObjectPath, interface: String) -> [String: DBusValue]? {
        state.withLock { $0.objects[path]?[interface] }
    }

    /// The paths having `interface`, below `ancestor` when given, sorted.
    public func paths(withInterface interface: String, under ancestor: ObjectPath? = nil) -> [ObjectPath] {
        state.withLock { s in
            s.objects.compactMap { path, ifaces -> ObjectPath? in
                guard ifaces[interface] != nil else { return nil }
                if let ancestor, !path.isDescendant(of: ancestor, orSelf: false) { return nil }
                return path
            }
        }.sorted()
    }
}
