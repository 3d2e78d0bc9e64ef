// AdapterStateTracker: ManagerState from the org.bluez owner, the chosen adapter and Powered.
import BlueZ
import DBus
import Locking

/// Derives a ``ManagerState`` and the adapter in use from an ``ObjectTree``; shared by the
/// central and peripheral managers.
///
/// The adapter is the one named (`"hci1"`) when a name is given; otherwise the first powered
/// adapter by hci index, else the first adapter. Once chosen it is kept while it exists.
///
/// - `org.bluez` not known yet: `.unknown`; never on the bus: `.unsupported`; gone after being
///   there: `.resetting` until it is back and loaded.
/// - Loaded, no (matching) adapter: `.unsupported`, or `.resetting` when the adapter in use went away.
/// - `GetManagedObjects` refused by the bus policy: `.unauthorized`.
/// - Otherwise `Powered` gives `.poweredOn` / `.poweredOff`.
///
/// Observers run on the connection's owner thread whenever the state or the adapter changes.
final class AdapterStateTracker: Sendable {
    /// The state and the adapter in use.
    struct Snapshot: Sendable, Equatable {
        var state: ManagerState = .unknown
        var adapter: ObjectPath?
    }

    private struct Inner {
        var snapshot = Snapshot()
        var hadAdapter = false
        var observers: [Int: @Sendable (Snapshot) -> Void] = [:]
        var nextID = 0
        var treeObservation: ObjectTreeObservation?
    }

    /// The tree read.
    let tree: ObjectTree
    /// The adapter asked for (`hci1`), nil for automatic choice.
    let adapterName: String?
    private let inner = Locked(Inner())

    /// A tracker on `tree`; call ``start()`` after adding observers.
    init(tree: ObjectTree, adapterName: String?) {
        self.tree = tree
        self.adapterName = adapterName
    }

    /// Begins following the tree and computes the first state.
    func start() {
        let observation = tree.observe { [weak self] event in
            switch event {
            case .ownerChanged, .loaded, .loadFailed: self?.recompute()
            case .interfacesAdded(_, let ifaces) where ifaces[Adapter1.interface] != nil: self?.recompute()
            case .interfacesRemoved(_, let names) where names.contains(Adapter1.interface): self?.recompute()
            case .propertiesChanged(_, let interface, _, _) where interface == Adapter1.interface: self?.recompute()
            default: break
            }
        }
        inner.withLock { $0.treeObservation = observation }
        tree.connection.execute { [weak self] in self?.recompute() }
    }

    /// Stops following the tree.
    func stop() {
        inner.withLock { $0.treeObservation }?.cancel()
    }

    /// The current state and adapter.
    var snapshot: Snapshot { inner.withLock { $0.snapshot } }

    /// Calls `handler` with each new snapshot (owner thread).
    func observe(_ handler: @escaping @Sendable (Snapshot) -> Void) -> ObjectTreeObservation {
        let id = inner.withLock { i -> Int in
            i.nextID += 1
            i.observers[i.nextID] = handler
            return i.nextID
        }
        return ObjectTreeObservation { [weak self] in self?.inner.withLock { _ = $0.observers.removeValue(forKey: id) } }
    }

    // MARK: - Deriving

    /// Recomputes the snapshot from the tree; notifies observers when it changed.
    func recompute() {
        let status = tree.status
        let adapters = tree.paths(withInterface: Adapter1.interface)
        var powered: [ObjectPath: Bool] = [:]
        for p in adapters {
            powered[p] = Adapter1.Properties(tree.properties(at: p, interface: Adapter1.interface) ?? [:], path: p).powered ?? false
        }
        let (changed, observers) = inner.withLock { i -> (Snapshot?, [@Sendable (Snapshot) -> Void]) in
            var next = Snapshot()
            next.adapter = choose(from: adapters, powered: powered, current: i.snapshot.adapter)
            next.state = state(status: status, adapter: next.adapter, powered: powered, hadAdapter: i.hadAdapter)
            if next.adapter != nil { i.hadAdapter = true }
            if !status.everOwned { i.hadAdapter = false }
            guard next != i.snapshot else { return (nil, []) }
            i.snapshot = next
            return (next, Array(i.observers.values))
        }
        guard let changed else { return }
        BlueZLog.debug("adapter state: \(changed.state) (\(changed.adapter?.rawValue ?? "no adapter"))")
        for o in observers { o(changed) }
    }

    private func choose(from adapters: [ObjectPath], powered: [ObjectPath: Bool], current: ObjectPath?) -> ObjectPath? {
        if let adapterName {
            return adapters.first { Adapter1.name(of: $0) == adapterName }
        }
        if let current, adapters.contains(current) { return current }
        let ordered = adapters.sorted { (Adapter1.index(of: $0) ?? Int.max, $0) < (Adapter1.index(of: $1) ?? Int.max, $1) }
        return ordered.first { powered[$0] == true } ?? ordered.first
    }

    private func state(status: ObjectTree.Status, adapter: ObjectPath?, powered: [ObjectPath: Bool], hadAdapter: Bool) -> ManagerState {
        guard status.ownerKnown else { return .unknown }
        guard status.owner != nil else { return status.everOwned ? .resetting : .unsupported }
        if let error = status.loadError {
            switch error.kind {
            case .accessDenied, .notAuthorized, .notPermitted: return .unauthorized
            default: return .unsupported
            }
        }
        guard status.loaded else { return hadAdapter ? .resetting : .unknown }
        guard let adapter else { return hadAdapter ? .resetting : .unsupported }
        return powered[adapter] == true ? .poweredOn : .poweredOff
    }
}
