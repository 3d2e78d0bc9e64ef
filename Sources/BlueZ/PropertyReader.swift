// Tolerant decoding of BlueZ property dictionaries.
import DBus
import Foundation

/// Reads typed values out of a BlueZ `a{sv}` property dictionary.
///
/// A property that is absent reads as nil. A property with a type BlueZ does not document is
/// ignored (it reads as nil) and a debug line names it: bus input never traps.
public struct PropertyReader: Sendable {
    /// The properties, variants unwrapped.
    public let properties: [String: DBusValue]
    /// The interface, for log lines.
    public let interface: String
    /// The object, for log lines.
    public let path: ObjectPath?

    /// Wraps `properties` of `interface` on `path`.
    public init(_ properties: [String: DBusValue], interface: String, path: ObjectPath? = nil) {
        self.properties = properties
        self.interface = interface
        self.path = path
    }

    /// The property `name` as `T`, or nil when absent or of another type.
    public func get<T: DBusDecodable>(_ name: String, as type: T.Type = T.self) -> T? {
        guard let value = properties[name] else { return nil }
        do { return try value.as(T.self) } catch {
            BlueZLog.debug("\(path?.rawValue ?? "?") \(interface).\(name): ignored, \(error.message)")
            return nil
        }
    }

    /// The property `name` as bytes (`ay`).
    public func bytes(_ name: String) -> Data? { get(name, as: Data.self) }

    /// `ManufacturerData` style dictionaries (`a{qv}` holding `ay`).
    public func manufacturerData(_ name: String) -> [UInt16: Data]? {
        guard let value = properties[name] else { return nil }
        guard case .dict(_, _, let entries) = value.unwrapped else {
            BlueZLog.debug("\(path?.rawValue ?? "?") \(interface).\(name): ignored, expected a{qv}, found \(value.signature)")
            return nil
        }
        var out: [UInt16: Data] = [:]
        for e in entries {
            guard let k = try? UInt16(dbusValue: e.key), let v = try? Data(dbusValue: e.value) else {
                BlueZLog.debug("\(path?.rawValue ?? "?") \(interface).\(name): entry ignored (\(e.key): \(e.value))")
                continue
            }
            out[k] = v
        }
        return out
    }

    /// `ServiceData` style dictionaries (`a{sv}` holding `ay`).
    public func serviceData(_ name: String) -> [String: Data]? {
        guard let value = properties[name] else { return nil }
        guard case .dict(_, _, let entries) = value.unwrapped else {
            BlueZLog.debug("\(path?.rawValue ?? "?") \(interface).\(name): ignored, expected a{sv}, found \(value.signature)")
            return nil
        }
        var out: [String: Data] = [:]
        for e in entries {
            guard let k = try? String(dbusValue: e.key), let v = try? Data(dbusValue: e.value) else {
                BlueZLog.debug("\(path?.rawValue ?? "?") \(interface).\(name): entry ignored (\(e.key): \(e.value))")
                continue
            }
            out[k] = v
        }
        return out
    }

    /// `AdvertisingData` style dictionaries (`a{yv}` holding `ay`: AD type → data).
    public func adStructures(_ name: String) -> [UInt8: Data]? {
        guard let value = properties[name] else { return nil }
        guard case .dict(_, _, let entries) = value.unwrapped else {
            BlueZLog.debug("\(path?.rawValue ?? "?") \(interface).\(name): ignored, expected a{yv}, found \(value.signature)")
            return nil
        }
        var out: [UInt8: Data] = [:]
        for e in entries {
            guard let k = try? UInt8(dbusValue: e.key), let v = try? Data(dbusValue: e.value) else {
                BlueZLog.debug("\(path?.rawValue ?? "?") \(interface).\(name): entry ignored (\(e.key): \(e.value))")
                continue
            }
            out[k] = v
        }
        return out
    }
}
