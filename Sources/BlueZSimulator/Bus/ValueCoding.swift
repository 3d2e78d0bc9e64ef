// ValueCoding: the model's PropertyValue to and from the DBus module's DBusValue, and the
// option dictionaries bluetoothd parses.

import DBus

// MARK: - PropertyValue ↔ DBusValue

extension PropertyValue {
    /// The value as sent on the bus.
    var dbus: DBusValue {
        switch self {
        case .bool(let v): .bool(v)
        case .byte(let v): .byte(v)
        case .int16(let v): .int16(v)
        case .uint16(let v): .uint16(v)
        case .uint32(let v): .uint32(v)
        case .string(let v): .string(v)
        case .objectPath(let v): .objectPath((try? ObjectPath(v)) ?? .root)
        case .bytes(let v): .array(element: .byte, v.map { .byte($0) })
        case .strings(let v): .array(element: .string, v.map { .string($0) })
        case .objectPaths(let v): .array(element: .objectPath, v.compactMap { (try? ObjectPath($0)).map { .objectPath($0) } })
        case .manufacturerData(let v):
            .dict(key: .uint16, value: .variant, v.sorted { $0.key < $1.key }.map {
                .init(.uint16($0.key), .variant(.array(element: .byte, $0.value.map { .byte($0) })))
            })
        case .adStructures(let v):
            .dict(key: .byte, value: .variant, v.sorted { $0.key < $1.key }.map {
                .init(.byte($0.key), .variant(.array(element: .byte, $0.value.map { .byte($0) })))
            })
        case .serviceData(let v):
            .dict(key: .string, value: .variant, v.sorted { $0.key < $1.key }.map {
                .init(.string($0.key), .variant(.array(element: .byte, $0.value.map { .byte($0) })))
            })
        case .options(let v):
            .dict(key: .string, value: .variant, v.sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant($0.value.dbus)) })
        }
    }

    /// The D-Bus type.
    var dbusType: DBusType { dbus.type }

    /// Converts a value received in Properties.Set (basic types only).
    init?(_ value: DBusValue) {
        switch value.unwrapped {
        case .bool(let v): self = .bool(v)
        case .string(let v): self = .string(v)
        case .int16(let v): self = .int16(v)
        case .uint16(let v): self = .uint16(v)
        case .uint32(let v): self = .uint32(v)
        case .byte(let v): self = .byte(v)
        default: return nil
        }
    }
}

extension InterfaceMap {
    /// `a{sa{sv}}` for InterfacesAdded / GetManagedObjects.
    var dbus: DBusValue {
        .dict(key: .string, value: .dict(key: .string, value: .variant), sorted { $0.key < $1.key }.map {
            .init(.string($0.key), .properties($0.value.mapValues(\.dbus)))
        })
    }
}

// MARK: - Incoming dictionaries

/// Reads an `a{sv}` argument into a Swift dictionary of unwrapped values.
func optionsDictionary(_ value: DBusValue?) -> [String: DBusValue]? {
    guard case .dict(.string, _, let entries)? = value else { return nil }
    var out: [String: DBusValue] = [:]
    for e in entries {
        guard case .string(let k) = e.key else { return nil }
        out[k] = e.value.unwrapped
    }
    return out
}

/// Bytes of an `ay` value.
func bytes(_ value: DBusValue?) -> [UInt8]? {
    guard case .array(.byte, let items)? = value?.unwrapped else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(items.count)
    for i in items { guard case .byte(let b) = i else { return nil }; out.append(b) }
    return out
}

/// Strings of an `as` value.
func strings(_ value: DBusValue?) -> [String]? {
    guard case .array(.string, let items)? = value?.unwrapped else { return nil }
    return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
}

extension DiscoveryFilter {
    /// Parses SetDiscoveryFilter's `a{sv}` with bluetoothd's rules (unknown key or wrong type:
    /// InvalidArguments). An empty dictionary clears the filter (nil).
    static func parse(_ dict: [String: DBusValue]) throws(BlueZErrorReply) -> DiscoveryFilter? {
        if dict.isEmpty { return nil }
        var f = DiscoveryFilter()
        for (key, value) in dict {
            switch (key, value) {
            case ("UUIDs", _):
                guard let list = strings(value) else { throw .invalidArguments }
                f.uuids = try list.map { (s: String) throws(BlueZErrorReply) -> String in
                    guard let u = BluetoothUUID.normalize(s) else { throw .invalidArguments }
                    return u
                }
            case ("RSSI", .int16(let v)): f.rssi = v
            case ("Pathloss", .uint16(let v)): f.pathloss = v
            case ("Transport", .string(let v)):
                guard let t = Transport(rawValue: v) else { throw .invalidArguments }
                f.transport = t
            case ("DuplicateData", .bool(let v)): f.duplicateData = v
            case ("Discoverable", .bool(let v)): f.discoverable = v
            case ("Pattern", .string(let v)): f.pattern = v
            case ("AutoConnect", .bool(let v)): f.autoConnect = v
            default: throw .invalidArguments
            }
        }
        return try f.validated()
    }
}

extension SimulatorCore.ValueOptions {
    /// Parses ReadValue/WriteValue options ("offset" q, "type" s; others ignored as bluetoothd does).
    static func parse(_ value: DBusValue?) throws(BlueZErrorReply) -> Self {
        guard let dict = optionsDictionary(value) else { throw .invalidArguments }
        var o = Self()
        if let v = dict["offset"] {
            guard case .uint16(let off) = v else { throw .invalidArguments }
            o.offset = off
        }
        if let v = dict["type"] {
            guard case .string(let t) = v else { throw .invalidArguments }
            o.type = t
        }
        return o
    }
}
