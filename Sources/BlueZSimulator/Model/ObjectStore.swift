// ObjectStore: the published object tree of the simulated bluetoothd, and the signals it causes.

// MARK: - ObjectStore

/// The objects the simulator publishes with their current properties. Every mutation emits
/// the `ObjectEvent` bluetoothd would emit, through `sink`. Confined to the simulator's queue.
public final class ObjectStore {
    private(set) var objects: [String: InterfaceMap] = [:]
    /// Receives every event, in order.
    var sink: (ObjectEvent) -> Void

    init(sink: @escaping (ObjectEvent) -> Void = { _ in }) {
        self.sink = sink
    }

    // MARK: Queries

    /// All objects and their interfaces (what `GetManagedObjects` returns).
    public var managedObjects: [String: InterfaceMap] { objects }

    /// The properties of `interface` on `path`, or nil when there is no such object/interface.
    public func properties(_ path: String, _ interface: String) -> [String: PropertyValue]? {
        objects[path]?[interface]
    }

    /// One property, or nil.
    public func property(_ path: String, _ interface: String, _ name: String) -> PropertyValue? {
        objects[path]?[interface]?[name]
    }

    /// Whether `path` is published.
    public func contains(_ path: String) -> Bool { objects[path] != nil }

    // MARK: Mutations

    /// Publishes `path` with `interfaces` (InterfacesAdded). Interfaces already there are replaced silently.
    func add(_ path: String, _ interfaces: InterfaceMap) {
        var current = objects[path] ?? [:]
        for (name, props) in interfaces { current[name] = props }
        objects[path] = current
        sink(.interfacesAdded(path: path, interfaces: interfaces))
    }

    /// Removes `path` (InterfacesRemoved with all its interfaces, sorted by name).
    func remove(_ path: String) {
        guard let current = objects.removeValue(forKey: path) else { return }
        sink(.interfacesRemoved(path: path, interfaces: current.keys.sorted()))
    }

    /// Removes every object under `prefix` + "/" (deepest first), then `prefix` itself if `including`.
    func removeSubtree(_ prefix: String, including: Bool) {
        let children = objects.keys.filter { $0.hasPrefix(prefix + "/") }
            .sorted { ($0.count, $0) > ($1.count, $1) }
        for child in children { remove(child) }
        if including { remove(prefix) }
    }

    /// Sets properties; emits one PropertiesChanged with those that really changed, and with
    /// `nil` values as invalidated (removed) properties. No signal when nothing changed.
    func update(_ path: String, _ interface: String, _ values: [String: PropertyValue?], force: Bool = false) {
        guard var ifaces = objects[path], var props = ifaces[interface] else { return }
        var changed: [String: PropertyValue] = [:]
        var invalidated: [String] = []
        for (name, value) in values {
            if let value {
                if force || props[name] != value {
                    props[name] = value
                    changed[name] = value
                }
            } else if props.removeValue(forKey: name) != nil {
                invalidated.append(name)
            }
        }
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        ifaces[interface] = props
        objects[path] = ifaces
        sink(.propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated.sorted()))
    }

    /// Sets one property.
    func set(_ path: String, _ interface: String, _ name: String, _ value: PropertyValue, force: Bool = false) {
        update(path, interface, [name: value], force: force)
    }

    /// Stores a property without emitting anything (its signals were sent another way).
    func setSilently(_ path: String, _ interface: String, _ name: String, _ value: PropertyValue) {
        guard objects[path]?[interface] != nil else { return }
        objects[path]?[interface]?[name] = value
        silentSink?(path, interface, name, value)
    }

    /// Told about `setSilently` (the D-Bus face keeps its exported values in step).
    var silentSink: ((String, String, String, PropertyValue) -> Void)?

    /// Forgets everything without emitting anything (a bluetoothd restart: the bus sees the name go).
    func reset() { objects.removeAll() }
}
