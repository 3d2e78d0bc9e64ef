// MutableDescriptor: a descriptor of a local characteristic, with BlueZ's descriptor security flags.
import BlueZ
import Foundation

/// A descriptor of a ``MutableCharacteristic``, exported as an `org.bluez.GattDescriptor1`
/// object below it. bluetoothd answers a central's reads and writes from ``value`` (a write
/// replaces it).
///
/// Its ``permissions`` become `GattDescriptor1.Flags` as BlueZ defines them: `.readable` →
/// `"read"`, `.writeable` → `"write"`, and the security requirements `"encrypt-read"`,
/// `"encrypt-write"`, `"encrypt-authenticated-read"`, `"encrypt-authenticated-write"`,
/// `"secure-read"`, `"secure-write"`, `"authorize"`. A read requirement is exported only with
/// `.readable`, a write requirement only with `.writeable`. bluetoothd refuses an access the link
/// does not satisfy (the central then pairs, see ``PairingAgent``).
public final class MutableDescriptor: Sendable, CustomStringConvertible {
    /// The UUID.
    public let uuid: BLEUUID
    /// Who may access the value, and with which link security.
    public let permissions: CharacteristicPermissions
    let local: LocalGattDescriptor

    /// A descriptor with `uuid`, `permissions` and an initial `value`.
    public init(uuid: BLEUUID, permissions: CharacteristicPermissions, value: Data = Data()) {
        self.uuid = uuid
        self.permissions = permissions
        local = LocalGattDescriptor(uuid: uuid.uuidString, flags: Self.bluezFlags(permissions), value: value)
    }

    /// The `GattDescriptor1.Flags` exported for `permissions`.
    public static func bluezFlags(_ permissions: CharacteristicPermissions) -> [String] {
        var flags: [String] = []
        if permissions.contains(.readable) { flags.append("read") }
        if permissions.contains(.writeable) { flags.append("write") }
        for flag in permissions.bluezFlags {
            switch CharacteristicPermissions.securedOperation(of: flag) {
            case .read: if permissions.contains(.readable) { flags.append(flag) }
            case .write: if permissions.contains(.writeable) { flags.append(flag) }
            case .notify, .indicate: break
            case nil: flags.append(flag)  // "authorize"
            }
        }
        return flags
    }

    /// The `Flags` exported.
    public var flags: [String] { local.flags }

    /// The value bluetoothd answers reads with (a central's write replaces it).
    public var value: Data {
        get { local.value }
        set { local.value = newValue }
    }

    /// `Descriptor (uuid) [flags]`.
    public var description: String { "Descriptor (\(uuid)) \(flags)" }
}
