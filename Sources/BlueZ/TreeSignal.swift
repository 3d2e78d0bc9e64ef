// TreeSignal: one signal of the service, decoded once, in the form the tree applies it.
import DBus
import Foundation

/// One signal of the service as the ``ObjectTree`` applies it: decoded once, by
/// `ObjectTree.signal(from:)`, whatever its shape. The two lone shapes are read in place from
/// the message (no ``Message``, no ``DBusValue`` tree for a lone `Value` change, no String for
/// names compared in place); every other signal is decoded into its ``ObjectTreeEvent``.
///
/// A lone shape holds pointers into the message: it is applied during the subscription's
/// `peek` call and never kept.
enum TreeSignal {
    /// A PropertiesChanged of `org.bluez.GattCharacteristic1` that changes only `Value` (bytes)
    /// and invalidates nothing: every StartNotify notification, and the change after a read.
    case loneValue(ObjectPath, Data)
    /// A PropertiesChanged that changes one property to a basic value and invalidates nothing:
    /// an RSSI update, a `Connected` or `Notifying` flip, …; its names read in place.
    case loneProperty(ObjectPath, LoneChange, DBusValue)
    /// Any other signal (InterfacesAdded, InterfacesRemoved, a general PropertiesChanged).
    case event(ObjectTreeEvent)

    /// The object the signal is about.
    var path: ObjectPath? {
        switch self {
        case .loneValue(let p, _), .loneProperty(let p, _, _): p
        case .event(let e): e.path
        }
    }

    /// The general form: the event the tree's observers see when no route takes the signal.
    var event: ObjectTreeEvent {
        switch self {
        case .loneValue(let path, let data):
            let value = DBusValue.array(element: .byte, data.map { .byte($0) })
            return .propertiesChanged(path, interface: GattCharacteristic1.interface, changed: ["Value": value], invalidated: [])
        case .loneProperty(let path, let change, let value):
            return .propertiesChanged(path, interface: change.interfaceName, changed: [change.propertyName: value], invalidated: [])
        case .event(let e):
            return e
        }
    }

    /// Describes the signal for the debug log.
    var description: String {
        switch self {
        case .loneValue(let path, let data): "PropertiesChanged \(path.rawValue) \(GattCharacteristic1.interface).Value (\(data.count) bytes)"
        case .loneProperty(let path, let change, _): "PropertiesChanged \(path.rawValue) \(change.interfaceName).\(change.propertyName)"
        case .event(let e): "\(e)"
        }
    }
}
