// AdvertisingCapabilities: what an adapter's org.bluez.LEAdvertisingManager1 says the
// controller can advertise.

import BlueZ
import DBus

// MARK: - AdvertisingCapabilities

/// What the adapter can advertise, read from the properties of its
/// `org.bluez.LEAdvertisingManager1` (``PeripheralManager/advertisingCapabilities(timeout:)``).
///
/// A property bluetoothd does not export reads as nil: `SupportedFeatures` and
/// `SupportedCapabilities` do not exist in BlueZ 5.55, are experimental from 5.56 to 5.76 (so in
/// 5.66: exported only when bluetoothd runs with `--experimental`) and always exported from 5.77
/// (so in 5.82);
/// `SupportedSecondaryChannels` is exported only when the controller can advertise on a
/// secondary channel (extended advertising).
public struct AdvertisingCapabilities: Sendable, Equatable, CustomStringConvertible {
    /// The legacy advertising data length: 31 bytes, the limit when the controller reports none.
    public static let legacyDataLength = 31

    /// `SupportedInstances`: advertisement instances still free (bluetoothd counts down as
    /// advertisements are registered).
    public var availableInstances: Int?
    /// `ActiveInstances`: advertisements registered now, by every program on the adapter.
    public var activeInstances: Int?
    /// `SupportedIncludes`: the values `LocalAdvertisement`'s `includes` accepts
    /// (`"tx-power"`, `"appearance"`, `"local-name"`, `"rsi"`).
    public var supportedIncludes: [String]?
    /// `SupportedSecondaryChannels`: `"1M"`, `"2M"`, `"Coded"`; nil when not exported
    /// (the controller has no extended advertising).
    public var supportedSecondaryChannels: [String]?
    /// `SupportedFeatures`: `"CanSetTxPower"`, `"HardwareOffload"`; nil before 5.77 without
    /// `--experimental`.
    public var supportedFeatures: [String]?
    /// `SupportedCapabilities["MaxAdvLen"]`: the controller's advertising data maximum in bytes;
    /// nil when `SupportedCapabilities` is not exported (then 31 bytes is the safe limit).
    public var maxAdvertisingDataLength: Int?
    /// `SupportedCapabilities["MaxScnRspLen"]`: the scan response maximum in bytes.
    public var maxScanResponseLength: Int?
    /// `SupportedCapabilities["MinTxPower"]` in dBm, when the controller reports a range.
    public var minTxPower: Int?
    /// `SupportedCapabilities["MaxTxPower"]` in dBm, when the controller reports a range.
    public var maxTxPower: Int?

    /// Capabilities as given (for tests and for planning without an adapter).
    public init(availableInstances: Int? = nil, activeInstances: Int? = nil, supportedIncludes: [String]? = nil,
                supportedSecondaryChannels: [String]? = nil, supportedFeatures: [String]? = nil,
                maxAdvertisingDataLength: Int? = nil, maxScanResponseLength: Int? = nil,
                minTxPower: Int? = nil, maxTxPower: Int? = nil) {
        self.availableInstances = availableInstances
        self.activeInstances = activeInstances
        self.supportedIncludes = supportedIncludes
        self.supportedSecondaryChannels = supportedSecondaryChannels
        self.supportedFeatures = supportedFeatures
        self.maxAdvertisingDataLength = maxAdvertisingDataLength
        self.maxScanResponseLength = maxScanResponseLength
        self.minTxPower = minTxPower
        self.maxTxPower = maxTxPower
    }

    /// Reads the `org.bluez.LEAdvertisingManager1` properties (absent or mistyped ones as nil).
    init(_ properties: [String: DBusValue], path: ObjectPath?) {
        let r = PropertyReader(properties, interface: "org.bluez.LEAdvertisingManager1", path: path)
        availableInstances = r.get("SupportedInstances", as: UInt8.self).map(Int.init)
        activeInstances = r.get("ActiveInstances", as: UInt8.self).map(Int.init)
        supportedIncludes = r.get("SupportedIncludes", as: [String].self)
        supportedSecondaryChannels = r.get("SupportedSecondaryChannels", as: [String].self)
        supportedFeatures = r.get("SupportedFeatures", as: [String].self)
        if case .dict(_, _, let entries)? = properties["SupportedCapabilities"]?.unwrapped {
            for e in entries {
                guard let key = try? String(dbusValue: e.key) else { continue }
                switch key {
                case "MaxAdvLen": maxAdvertisingDataLength = (try? UInt8(dbusValue: e.value)).map(Int.init)
                case "MaxScnRspLen": maxScanResponseLength = (try? UInt8(dbusValue: e.value)).map(Int.init)
                case "MinTxPower": minTxPower = (try? Int16(dbusValue: e.value)).map(Int.init)
                case "MaxTxPower": maxTxPower = (try? Int16(dbusValue: e.value)).map(Int.init)
                default: continue
                }
            }
        }
    }

    // MARK: Derived

    /// The advertising data limit validation uses: `MaxAdvLen` when reported, else 31 bytes.
    public var advertisingDataLimit: Int { maxAdvertisingDataLength ?? Self.legacyDataLength }

    /// The scan response limit: `MaxScnRspLen` when reported, else 31 bytes (bluetoothd shortens
    /// a longer name to fit).
    public var scanResponseLimit: Int { maxScanResponseLength ?? Self.legacyDataLength }

    /// Instances in all: free plus active, when both are exported.
    public var totalInstances: Int? {
        guard let availableInstances, let activeInstances else { return nil }
        return availableInstances + activeInstances
    }

    /// One line: instances, lengths, includes, channels, features.
    public var description: String {
        func list(_ l: [String]?) -> String { l.map { "[" + $0.joined(separator: ",") + "]" } ?? "n/a" }
        func n(_ v: Int?) -> String { v.map(String.init) ?? "n/a" }
        return "instances \(n(activeInstances)) active, \(n(availableInstances)) free; max adv \(n(maxAdvertisingDataLength)) B, "
            + "scan response \(n(maxScanResponseLength)) B; tx power \(n(minTxPower))…\(n(maxTxPower)) dBm; includes \(list(supportedIncludes)); "
            + "secondary \(list(supportedSecondaryChannels)); features \(list(supportedFeatures))"
    }
}
