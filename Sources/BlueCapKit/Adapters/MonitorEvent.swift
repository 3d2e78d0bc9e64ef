// MonitorEvent: a device found or lost by a passive advertisement monitor.

/// What ``CentralManager/startMonitoring(patterns:rssi:capacity:fallbackToActiveScanning:)`` yields.
public enum MonitorEvent: Sendable, CustomStringConvertible {
    /// A device matching the patterns (`org.bluez.AdvertisementMonitor1.DeviceFound`).
    case found(Peripheral)
    /// A found device went quiet or out of range (`DeviceLost`; only with ``MonitorRSSI``).
    case lost(Peripheral)

    /// The peripheral concerned.
    public var peripheral: Peripheral {
        switch self {
        case .found(let p), .lost(let p): return p
        }
    }

    public var description: String {
        switch self {
        case .found(let p): return "found \(p.identifier)"
        case .lost(let p): return "lost \(p.identifier)"
        }
    }
}
