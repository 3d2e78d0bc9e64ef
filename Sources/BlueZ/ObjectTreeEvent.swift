// What an ObjectTree tells its observers.
import DBus

/// The interfaces of one object: interface name → property name → value (variants unwrapped).
public typealias InterfaceProperties = [String: [String: DBusValue]]

/// A change in an ``ObjectTree``, delivered on the connection's owner thread.
public enum ObjectTreeEvent: Sendable, CustomStringConvertible {
    /// `org.freedesktop.DBus.ObjectManager.InterfacesAdded`, or an object found by
    /// `GetManagedObjects` after (re)loading: the interfaces added to `path`.
    case interfacesAdded(ObjectPath, InterfaceProperties)
    /// `InterfacesRemoved`, or every object when the service went away: the interfaces removed
    /// from `path` (the object is gone when it has none left).
    case interfacesRemoved(ObjectPath, [String])
    /// `org.freedesktop.DBus.Properties.PropertiesChanged` on `path` (already applied to the tree).
    case propertiesChanged(ObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String])
    /// The service's owner changed (nil: the service left the bus; the tree has been emptied and
    /// every object reported removed first). Whole-tree observers only.
    case ownerChanged(String?)
    /// `GetManagedObjects` answered and its objects were reported added. Whole-tree observers only.
    case loaded
    /// `GetManagedObjects` failed (e.g. access denied by the bus policy). Whole-tree observers only.
    case loadFailed(BlueZError)

    /// The object the event is about, if any.
    public var path: ObjectPath? {
        switch self {
        case .interfacesAdded(let p, _), .interfacesRemoved(let p, _), .propertiesChanged(let p, _, _, _): return p
        case .ownerChanged, .loaded, .loadFailed: return nil
        }
    }

    public var description: String {
        switch self {
        case .interfacesAdded(let p, let i): return "added \(p) \(i.keys.sorted())"
        case .interfacesRemoved(let p, let i): return "removed \(p) \(i.sorted())"
        case .propertiesChanged(let p, let i, let c, let inv): return "changed \(p) \(i) \(c.keys.sorted()) -\(inv)"
        case .ownerChanged(let o): return "owner \(o ?? "none")"
        case .loaded: return "loaded"
        case .loadFailed(let e): return "load failed: \(e)"
        }
    }
}
