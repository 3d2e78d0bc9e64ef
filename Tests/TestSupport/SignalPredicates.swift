// SignalPredicates: matching BlueZ's signals and reading byte arrays in raw D-Bus tests (the
// simulator's bus tests and the peripheral-role integration tests).
import DBus

// MARK: - Signals

/// `InterfacesAdded` for the object `path`.
public func isAdded(_ m: Message, _ path: String) -> Bool {
    m.member == "InterfacesAdded" && m.body.first == .objectPath(try! ObjectPath(path))
}

/// `InterfacesRemoved` for the object `path`.
public func isRemoved(_ m: Message, _ path: String) -> Bool {
    m.member == "InterfacesRemoved" && m.body.first == .objectPath(try! ObjectPath(path))
}

/// `PropertiesChanged` on `path` carrying `name` (= `value` when given).
public func isChanged(_ m: Message, _ path: String, _ name: String, _ value: DBusValue? = nil) -> Bool {
    guard m.member == "PropertiesChanged", m.path?.rawValue == path, let changed = changedProperties(m), let v = changed[name] else { return false }
    return value == nil || v == value
}

/// The changed properties of a `PropertiesChanged` signal, unwrapped; nil for another body.
public func changedProperties(_ m: Message) -> [String: DBusValue]? {
    guard m.body.count == 3, case .dict(_, _, let entries) = m.body[1] else { return nil }
    var d: [String: DBusValue] = [:]
    for e in entries { if case .string(let k) = e.key { d[k] = e.value.unwrapped } }
    return d
}

// MARK: - Byte arrays

/// The bytes of an `ay` value (variant or not); nil for another type.
public func byteArray(_ v: DBusValue?) -> [UInt8]? {
    guard case .array(.byte, let items)? = v?.unwrapped else { return nil }
    return items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
}

/// `b` as an `ay` value.
public func bytesValue(_ b: [UInt8]) -> DBusValue { .array(element: .byte, b.map { .byte($0) }) }

/// Device1's properties from an InterfacesAdded signal.
public func deviceProperties(_ m: Message) -> [String: DBusValue] {
    guard m.body.count == 2, case .dict(_, _, let ifaces) = m.body[1] else { return [:] }
    for i in ifaces where i.key == .string("org.bluez.Device1") {
        guard case .dict(_, _, let props) = i.value else { continue }
        var d: [String: DBusValue] = [:]
        for p in props { if case .string(let k) = p.key { d[k] = p.value.unwrapped } }
        return d
    }
    return [:]
}
