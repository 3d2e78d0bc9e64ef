// ObjectEvent: what the simulated bluetoothd tells its clients, in the order it tells them.

// MARK: - ObjectEvent

/// One change of the simulated object tree, exactly as it becomes one D-Bus signal:
/// `org.freedesktop.DBus.ObjectManager.InterfacesAdded/InterfacesRemoved` on `/` or
/// `org.freedesktop.DBus.Properties.PropertiesChanged` on the object.
public enum ObjectEvent: Sendable, Equatable {
    /// `InterfacesAdded(o path, a{sa{sv}} interfaces)`.
    case interfacesAdded(path: String, interfaces: InterfaceMap)
    /// `InterfacesRemoved(o path, as interfaces)`.
    case interfacesRemoved(path: String, interfaces: [String])
    /// `PropertiesChanged(s interface, a{sv} changed, as invalidated)` on `path`.
    case propertiesChanged(path: String, interface: String, changed: [String: PropertyValue], invalidated: [String])

    /// The object path the event is about.
    public var path: String {
        switch self {
        case .interfacesAdded(let p, _), .interfacesRemoved(let p, _), .propertiesChanged(let p, _, _, _): p
        }
    }
}
