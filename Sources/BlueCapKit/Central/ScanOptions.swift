// Options of CentralManager.startScanning, mapped to Adapter1.SetDiscoveryFilter.
import BlueZ

/// How to scan (`org.bluez.Adapter1.SetDiscoveryFilter` keys).
public struct ScanOptions: Sendable, Equatable {
    /// Yield a peripheral on every advertisement update, not only the first time in a scan
    /// (`DuplicateData`).
    public var allowDuplicates: Bool
    /// Ignore advertisements weaker than this many dBm (`RSSI`); checked again on our side since
    /// bluetoothd merges every client's filter.
    public var rssiThreshold: Int16?
    /// The transport: "le" (default), "bredr" or "auto" (`Transport`).
    public var transport: String
    /// Only devices whose address or name starts with this (`Pattern`, BlueZ 5.54+), also checked on our side.
    public var pattern: String?

    /// Scan options; by default LE only, first sighting only, no RSSI threshold.
    public init(allowDuplicates: Bool = false, rssiThreshold: Int16? = nil, transport: String = "le", pattern: String? = nil) {
        self.allowDuplicates = allowDuplicates
        self.rssiThreshold = rssiThreshold
        self.transport = transport
        self.pattern = pattern
    }
}

/// What a ``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
/// stream yields, as in BlueCap.
public enum ConnectionEvent: Sendable, Equatable, CustomStringConvertible {
    /// Connected (`Device1.Connect` succeeded, `Connected` is true).
    case connect
    /// `Connect` did not complete within the connection timeout; call `reconnect()` to try again.
    case timeout
    /// The link dropped; call `reconnect()` to try again.
    case disconnect
    /// The app called `disconnect()`.
    case forceDisconnect
    /// More timeouts than `timeoutRetries`, or disconnects than `disconnectRetries`: call `terminate()`.
    case giveUp

    public var description: String {
        switch self {
        case .connect: return "connect"
        case .timeout: return "timeout"
        case .disconnect: return "disconnect"
        case .forceDisconnect: return "forceDisconnect"
        case .giveUp: return "giveUp"
        }
    }
}
