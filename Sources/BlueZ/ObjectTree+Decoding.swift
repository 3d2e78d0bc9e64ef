// ObjectTree+Decoding: the service's signals as TreeSignals, and the one type rule of their
// values (pure: no state, no bus).
import DBus
import Foundation

extension ObjectTree {
    // MARK: - Decoding

    /// A PropertiesChanged read in place (before any ``Message`` is made): its lone-change
    /// form, nil for any other shape (``signal(from:)-(Message)`` then decodes it).
    static func signal(from view: SignalView) -> TreeSignal? {
        guard let path = view.path, let change = LoneChange(view) else { return nil }
        if change.isProperty("Value", of: GattCharacteristic1.interface), let data = change.bytes { return .loneValue(path, data) }
        return change.basicValue.map { .loneProperty(path, change, $0) }
    }

    /// InterfacesAdded / InterfacesRemoved / PropertiesChanged decoded; nil when malformed.
    static func signal(from m: Message) -> TreeSignal? {
        switch (m.interface, m.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard m.body.count == 2, case .objectPath(let path) = m.body[0], let ifaces = interfaceMap(m.body[1]) else { return nil }
            return .event(.interfacesAdded(path, ifaces))
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard m.body.count == 2, case .objectPath(let path) = m.body[0],
                  let names = try? [String](dbusValue: m.body[1]) else { return nil }
            return .event(.interfacesRemoved(path, names))
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard let path = m.path, m.body.count >= 2, case .string(let interface) = m.body[0],
                  let changed = propertyMap(m.body[1]) else { return nil }
            var invalidated: [String] = []
            if m.body.count > 2, case .array(_, let items) = m.body[2], !items.isEmpty {
                for case .string(let name) in items { invalidated.append(name) }
            }
            return .event(.propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated))
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

    // MARK: - The type rule

    /// A BlueZ property never changes type: it keeps the type it was published with, and a
    /// change of another type is bad input that must not replace the good value (nor reach
    /// observers). Whether `new` may replace `cached` (nil: the property is not cached). Every
    /// route checks its changes here.
    static func keepsType(_ cached: DBusValue?, _ new: DBusValue) -> Bool {
        cached.map { $0.hasSameType(as: new) } ?? true
    }

    /// The type of a characteristic's `Value` (`ay`), for the lone `Value` route's check.
    static let byteArray = DBusValue.array(element: .byte, [])
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
