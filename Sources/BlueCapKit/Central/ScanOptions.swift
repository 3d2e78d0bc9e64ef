// Options of CentralManager.startScanning, mapped to Adapter1.SetDiscoveryFilter.
import BlueZ

/// How to scan: the keys of `org.bluez.Adapter1.SetDiscoveryFilter`, typed.
///
/// bluetoothd keeps one filter per client and scans with their union: the UUID lists are merged,
/// the lowest RSSI threshold wins, the transports are combined, and DuplicateData or
/// Discoverable asked by any client apply to all. Device objects are shared by every client, so
/// a device another program's filter lets through is on the bus for us too: the manager checks
/// UUIDs, RSSI, pathloss and pattern again on its side before yielding a peripheral. The filter
/// is dropped by bluetoothd when the scan stops (`StopDiscovery`) or this program leaves the bus.
public struct ScanOptions: Sendable, Equatable {
    /// `Transport`: which radio to scan with.
    public enum Transport: String, Sendable, Equatable {
        /// LE and BR/EDR, interleaved when the controller supports both.
        case auto
        /// Bluetooth Low Energy only.
        case le
        /// BR/EDR (classic) only; BLE peripherals are not found.
        case bredr
    }

    /// Yield a peripheral on every advertisement update, not only the first time in a scan
    /// (`DuplicateData`).
    public var allowDuplicates: Bool
    /// Ignore advertisements weaker than this many dBm (`RSSI`, -127…20); checked again on our
    /// side since bluetoothd merges every client's filter. Not together with ``pathloss``.
    public var rssiThreshold: Int16?
    /// Ignore advertisements whose path loss (advertised TX power − RSSI) exceeds this many dB
    /// (`Pathloss`, ≤ 137); devices that advertise no TX power are ignored. Not together with
    /// ``rssiThreshold`` (bluetoothd refuses both with `InvalidArguments`).
    public var pathloss: UInt16?
    /// `Transport` (LE by default).
    public var transport: Transport
    /// Only devices whose address or name starts with this (`Pattern`, BlueZ 5.54+), also checked on our side.
    public var pattern: String?
    /// Make the adapter discoverable while this scan runs (`Discoverable`), so that another
    /// central scanning can find it; bluetoothd restores the setting when the scan stops.
    public var discoverable: Bool

    /// Scan options; by default LE only, first sighting only, no RSSI threshold, not discoverable.
    public init(allowDuplicates: Bool = false, rssiThreshold: Int16? = nil, pathloss: UInt16? = nil, transport: Transport = .le,
                pattern: String? = nil, discoverable: Bool = false) {
        self.allowDuplicates = allowDuplicates
        self.rssiThreshold = rssiThreshold
        self.pathloss = pathloss
        self.transport = transport
        self.pattern = pattern
        self.discoverable = discoverable
    }

    /// The `SetDiscoveryFilter` argument for `uuids` (only keys with a value are sent;
    /// Discoverable only when asked, so other clients' setting is left alone).
    func discoveryFilter(uuids: [String]) -> Adapter1.DiscoveryFilter {
        Adapter1.DiscoveryFilter(uuids: uuids, rssi: rssiThreshold, pathloss: pathloss, transport: transport.rawValue,
                                 duplicateData: allowDuplicates, pattern: pattern, discoverable: discoverable ? true : nil)
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
