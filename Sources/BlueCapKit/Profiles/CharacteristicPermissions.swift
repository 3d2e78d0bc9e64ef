// CharacteristicPermissions: who may access a local characteristic's value, and BlueZ's security flags.

import Foundation

/// Access permissions of a characteristic value. For an exported characteristic they become the
/// security flags of `org.bluez.GattCharacteristic1.Flags` (`"encrypt-read"`, `"secure-write"`, …);
/// for a remote one they are parsed back from the same strings.
public struct CharacteristicPermissions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The permission bits.
    public let rawValue: UInt16

    /// Wraps raw bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The value may be read.
    public static let readable = CharacteristicPermissions(rawValue: 0x01)
    /// The value may be written.
    public static let writeable = CharacteristicPermissions(rawValue: 0x02)
    /// Reads need an encrypted link (`"encrypt-read"`).
    public static let readEncryptionRequired = CharacteristicPermissions(rawValue: 0x04)
    /// Writes need an encrypted link (`"encrypt-write"`).
    public static let writeEncryptionRequired = CharacteristicPermissions(rawValue: 0x08)
    /// Reads need an encrypted, authenticated (MITM-protected) link (`"encrypt-authenticated-read"`).
    public static let readAuthenticationRequired = CharacteristicPermissions(rawValue: 0x10)
    /// Writes need an encrypted, authenticated link (`"encrypt-authenticated-write"`).
    public static let writeAuthenticationRequired = CharacteristicPermissions(rawValue: 0x20)
    /// Reads need LE Secure Connections (`"secure-read"`).
    public static let readSecureConnectionRequired = CharacteristicPermissions(rawValue: 0x40)
    /// Writes need LE Secure Connections (`"secure-write"`).
    public static let writeSecureConnectionRequired = CharacteristicPermissions(rawValue: 0x80)
    /// Each access is authorized by the application (`"authorize"`).
    public static let authorize = CharacteristicPermissions(rawValue: 0x100)

    /// The operation a security flag qualifies.
    enum SecuredOperation { case read, write, notify, indicate }

    /// The security flags that carry a permission, in the order they are exported.
    static let securityFlagNames: [(permission: CharacteristicPermissions, flag: String)] = [
        (.readEncryptionRequired, "encrypt-read"),
        (.writeEncryptionRequired, "encrypt-write"),
        (.readAuthenticationRequired, "encrypt-authenticated-read"),
        (.writeAuthenticationRequired, "encrypt-authenticated-write"),
        (.readSecureConnectionRequired, "secure-read"),
        (.writeSecureConnectionRequired, "secure-write"),
        (.authorize, "authorize"),
    ]

    /// The operation qualified by a security flag (`"encrypt-notify"` → `.notify`), nil for other strings.
    static func securedOperation(of flag: String) -> SecuredOperation? {
        let prefixes = ["encrypt-authenticated-", "encrypt-", "secure-"]
        guard let prefix = prefixes.first(where: { flag.hasPrefix($0) }) else { return nil }
        switch flag.dropFirst(prefix.count) {
        case "read": return .read
        case "write": return .write
        case "notify": return .notify
        case "indicate": return .indicate
        default: return nil
        }
    }

    /// The permissions implied by BlueZ `Flags` strings: `.readable` when reading is possible,
    /// `.writeable` when any kind of write is, plus each security requirement. Unknown strings are ignored.
    public init(bluezFlags: [String]) {
        var permissions: CharacteristicPermissions = []
        for flag in bluezFlags {
            if let entry = Self.securityFlagNames.first(where: { $0.flag == flag }) {
                permissions.insert(entry.permission)
            }
            switch flag {
            case "read": permissions.insert(.readable)
            case "write", "write-without-response", "reliable-write", "authenticated-signed-writes":
                permissions.insert(.writeable)
            default:
                switch Self.securedOperation(of: flag) {
                case .read: permissions.insert(.readable)
                case .write: permissions.insert(.writeable)
                case .notify, .indicate, nil: break
                }
            }
        }
        self = permissions
    }

    /// The BlueZ security `Flags` strings for these permissions. `.readable` and `.writeable` have
    /// no flag of their own: reading and writing are granted by the properties.
    public var bluezFlags: [String] {
        Self.securityFlagNames.filter { contains($0.permission) }.map(\.flag)
    }

    /// The permission names joined with `|`, or `[]`.
    public var description: String {
        var names: [String] = []
        if contains(.readable) { names.append("readable") }
        if contains(.writeable) { names.append("writeable") }
        names += bluezFlags
        return names.isEmpty ? "[]" : names.joined(separator: "|")
    }
}

// MARK: - Combined Flags

/// Conversion between BlueZ's `GattCharacteristic1.Flags` and the properties/permissions pair.
public enum CharacteristicFlags {
    /// The `Flags` value to export for a local characteristic: its properties' flags, then its
    /// security flags. A security flag is only emitted when its operation is among the properties
    /// (bluetoothd would otherwise grant the operation through the security flag alone).
    public static func bluezFlags(properties: CharacteristicProperties, permissions: CharacteristicPermissions) -> [String] {
        let allowed = permissions.bluezFlags.filter { flag in
            switch CharacteristicPermissions.securedOperation(of: flag) {
            case .read: return properties.contains(.read)
            case .write:
                return !properties.isDisjoint(with: [.write, .writeWithoutResponse, .reliableWrite, .authenticatedSignedWrites])
            case .notify, .indicate, nil: return true
            }
        }
        return properties.bluezFlags + allowed
    }

    /// Parses a remote characteristic's `Flags`: its properties, permissions, and the strings neither knows.
    public static func parse(_ flags: [String]) -> (properties: CharacteristicProperties, permissions: CharacteristicPermissions, unknown: [String]) {
        let known = Set(CharacteristicProperties.bluezFlagNames.map(\.flag))
            .union(CharacteristicPermissions.securityFlagNames.map(\.flag))
        let unknown = flags.filter { !known.contains($0) && CharacteristicPermissions.securedOperation(of: $0) == nil }
        return (CharacteristicProperties(bluezFlags: flags), CharacteristicPermissions(bluezFlags: flags), unknown)
    }
}
