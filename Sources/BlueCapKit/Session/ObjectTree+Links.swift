// ObjectTree+Links: the devices with a link up, and a device's adapter — read the same way by
// the connection slots and the foreign-connection list.
import BlueZ
import DBus

// MARK: - Links in the object cache

extension ObjectTree {
    /// The devices (under `adapter`, or every adapter) whose cached `Device1.Connected` is true.
    func connectedDevices(under adapter: ObjectPath? = nil) -> [ObjectPath] {
        paths(withInterface: Device1.interface, under: adapter).filter {
            properties(at: $0, interface: Device1.interface)?["Connected"] == .bool(true)
        }
    }
}

extension ObjectPath {
    /// `/org/bluez/hci0` for `/org/bluez/hci0/dev_…`; nil for a path with no parent.
    var deviceAdapter: ObjectPath? {
        let raw = rawValue
        guard let slash = raw.lastIndex(of: "/"), slash != raw.startIndex else { return nil }
        return try? ObjectPath(String(raw[..<slash]))
    }
}
