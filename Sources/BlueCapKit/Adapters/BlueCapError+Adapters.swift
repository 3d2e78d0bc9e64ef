// BlueCapError+Adapters: the error kinds of adapters and advertisement monitors.
import BlueZ

extension BlueZErrorKind {
    /// `org.bluez.AdvertisementMonitorManager1` is missing on the adapter: bluetoothd (5.66)
    /// runs without `--experimental`. The message says how to enable it.
    public static let monitoringUnavailable = Self(rawValue: "org.bluecap.Error.MonitoringUnavailable")
    /// bluetoothd released the advertisement monitor (`AdvertisementMonitor1.Release`): it
    /// refused the monitor's settings or deactivated it.
    public static let monitorReleased = Self(rawValue: "org.bluecap.Error.MonitorReleased")
}

extension BlueCapError {
    /// An error of `operation` about adapter `name` (its path `/org/bluez/<name>` in ``path``).
    init(_ kind: Kind, _ operation: String, adapter name: String?, _ message: String, bluez: BlueZError? = nil) {
        self.init(kind: kind, operation: operation, path: name.map { "/org/bluez/\($0)" }, bluez: bluez, message: message)
    }

    /// BlueZ's answer to `operation` on adapter `name`, keeping its kind.
    init(_ error: BlueZError, _ operation: String, adapter name: String?) {
        self.init(error, operation: operation, path: name.map { "/org/bluez/\($0)" } ?? error.path)
    }
}
