/// The state of a ``CentralManager`` or ``PeripheralManager``, derived from the `org.bluez`
/// owner on the bus, the chosen adapter's presence and its `Powered` property.
public enum ManagerState: Sendable, Equatable, CustomStringConvertible {
    /// Not known yet: the first look at the bus has not completed.
    case unknown
    /// bluetoothd went away or the adapter disappeared; the manager waits for it to return.
    case resetting
    /// No usable adapter: no `org.bluez` on the bus, or no adapter (or not the one asked for).
    case unsupported
    /// The bus policy refused us (`org.freedesktop.DBus.Error.AccessDenied`).
    case unauthorized
    /// The adapter exists and `Powered` is false.
    case poweredOff
    /// The adapter exists and `Powered` is true: ready.
    case poweredOn

    /// A lowercase name for logs and JSON output.
    public var description: String {
        switch self {
        case .unknown: return "unknown"
        case .resetting: return "resetting"
        case .unsupported: return "unsupported"
        case .unauthorized: return "unauthorized"
        case .poweredOff: return "poweredOff"
        case .poweredOn: return "poweredOn"
        }
    }
}
