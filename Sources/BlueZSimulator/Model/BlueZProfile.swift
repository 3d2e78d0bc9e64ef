// BlueZProfile: what the simulated bluetoothd exports, as a given BlueZ release does.

// MARK: - BlueZProfile

/// What differs between the BlueZ releases the simulator imitates: which interfaces, methods and
/// properties bluetoothd exports over D-Bus. A bus-tier test runs an application against a
/// 5.55-like or a 5.82-like bluetoothd by starting the simulator with ``bluez5_55`` or
/// ``bluez5_82``; ``bluez5_66`` (the default) is what the simulator always did.
///
/// Each "since" below was read from BlueZ's sources (`src/adapter.c`, `src/device.c`,
/// `src/gatt-client.c`, `src/adv_monitor.c`) at the release tags, and its `ChangeLog`:
/// - `org.bluez.AdvertisementMonitorManager1`: since 5.56, and only with `bluetoothd
///   --experimental` (`Experimental = true`) in every release up to 5.82 and later;
/// - `Adapter1.ConnectDevice`: experimental in every release (introspection lists it only then);
///   up to 5.68 it answers `AlreadyExists` for an address that has a device object;
/// - `Adapter1.Roles`: since 5.55;
/// - `Adapter1.ExperimentalFeatures`: since 5.62, present only when the kernel's experimental
///   features are on (``experimentalFeatures`` not empty);
/// - `GattCharacteristic1.MTU`: since 5.62;
/// - `Device1.Bonded`: since 5.65;
/// - `Adapter1.PowerState`: since 5.66, experimental (exported only with `--experimental`)
///   until 5.73;
/// - `Adapter1.Manufacturer` and `Adapter1.Version`: since 5.71;
/// - `Adapter1.Connectable`: since 5.79;
/// - `Device1.AdvertisingData` and `Device1.AdvertisingFlags`: since 5.50, experimental
///   (exported only with `--experimental`) until 5.77, stable from 5.78.
///
/// `Device1.PreferredBearer` (5.80, experimental) exists only for dual-mode devices; the
/// simulated peripherals are LE-only, so no profile exports it.
public struct BlueZProfile: Sendable, Equatable, CustomStringConvertible {
    /// The release imitated ("5.66"). bluetoothd does not say its version over D-Bus, and neither
    /// does the simulator: this is for test names and logs.
    public var version: String
    /// bluetoothd runs with `--experimental` (`Experimental = true` in `main.conf`).
    public var experimental: Bool
    /// The release has `org.bluez.AdvertisementMonitorManager1` (5.56+); exported only when
    /// ``experimental``.
    public var advertisementMonitors: Bool
    /// `GattCharacteristic1.MTU` (5.62+).
    public var characteristicMTU: Bool
    /// `Device1.Bonded` (5.65+).
    public var deviceBonded: Bool
    /// `Adapter1.PowerState` (5.66+).
    public var adapterPowerState: Bool
    /// `Adapter1.PowerState` is experimental (5.66–5.72: exported only with ``experimental``).
    public var adapterPowerStateExperimental: Bool
    /// `Adapter1.Manufacturer` and `Adapter1.Version` (5.71+).
    public var adapterManufacturerAndVersion: Bool
    /// `Adapter1.Connectable` (5.79+).
    public var adapterConnectable: Bool
    /// The release has `Adapter1.ExperimentalFeatures` (5.62+).
    public var adapterExperimentalFeatures: Bool
    /// The kernel experimental features enabled (128-bit UUIDs); `Adapter1.ExperimentalFeatures`
    /// is exported only when this is not empty, as bluetoothd does.
    public var experimentalFeatures: [String]
    /// `Adapter1.ConnectDevice` answers `AlreadyExists` when a device object for the address
    /// exists (up to 5.68); from 5.69 it connects that device and answers its path.
    public var connectDeviceRejectsExisting = true
    /// `LEAdvertisingManager1.SupportedFeatures` and `SupportedCapabilities` exist (5.56+).
    public var advertisingCapabilities = true
    /// They are experimental (5.56 to 5.76: exported only with ``experimental``), and so is the
    /// parsing of `LEAdvertisement1.MinInterval`, `MaxInterval` and `TxPower` (ignored without it).
    public var advertisingCapabilitiesExperimental = true
    /// `LEAdvertisement1.MinInterval`, `MaxInterval` and `TxPower` exist (5.56+; 5.55 ignores them).
    public var advertisementIntervals = true
    /// `Device1.AdvertisingData` and `Device1.AdvertisingFlags` are experimental (up to 5.77:
    /// exported only with ``experimental``).
    public var deviceAdvertisingDataExperimental: Bool

    /// A profile; the named ones (``bluez5_55``, ``bluez5_66``, ``bluez5_82``) are the usual start.
    public init(version: String, experimental: Bool = false, advertisementMonitors: Bool, characteristicMTU: Bool,
                deviceBonded: Bool, adapterPowerState: Bool, adapterPowerStateExperimental: Bool = false, adapterManufacturerAndVersion: Bool,
                adapterConnectable: Bool, adapterExperimentalFeatures: Bool, experimentalFeatures: [String] = [],
                deviceAdvertisingDataExperimental: Bool = true) {
        self.version = version
        self.experimental = experimental
        self.advertisementMonitors = advertisementMonitors
        self.characteristicMTU = characteristicMTU
        self.deviceBonded = deviceBonded
        self.adapterPowerState = adapterPowerState
        self.adapterPowerStateExperimental = adapterPowerStateExperimental
        self.adapterManufacturerAndVersion = adapterManufacturerAndVersion
        self.adapterConnectable = adapterConnectable
        self.adapterExperimentalFeatures = adapterExperimentalFeatures
        self.experimentalFeatures = experimentalFeatures
        self.deviceAdvertisingDataExperimental = deviceAdvertisingDataExperimental
    }

    // MARK: Releases

    /// BlueZ 5.55 (Debian 11): no advertisement monitors at all, no characteristic MTU, no
    /// `Bonded`, no `PowerState`.
    /// No `SupportedFeatures`/`SupportedCapabilities`, and advertisement intervals and TX power
    /// are not read.
    public static let bluez5_55: BlueZProfile = {
        var p = BlueZProfile(
            version: "5.55", advertisementMonitors: false, characteristicMTU: false, deviceBonded: false,
            adapterPowerState: false, adapterManufacturerAndVersion: false, adapterConnectable: false,
            adapterExperimentalFeatures: false)
        p.advertisingCapabilities = false
        p.advertisementIntervals = false
        return p
    }()

    /// BlueZ 5.66 (Debian 12): what the simulator imitated before profiles; the default.
    /// `PowerState` is experimental there.
    public static let bluez5_66 = BlueZProfile(
        version: "5.66", advertisementMonitors: true, characteristicMTU: true, deviceBonded: true,
        adapterPowerState: true, adapterPowerStateExperimental: true, adapterManufacturerAndVersion: false, adapterConnectable: false,
        adapterExperimentalFeatures: true)

    /// BlueZ 5.82: adds `Manufacturer`, `Version` and `Connectable` to Adapter1, and `PowerState`
    /// is no longer experimental (5.73), nor are `Device1.AdvertisingData` and
    /// `AdvertisingFlags` (5.78); advertisement monitors and `ConnectDevice` still are.
    public static let bluez5_82: BlueZProfile = {
        var p = BlueZProfile(
            version: "5.82", advertisementMonitors: true, characteristicMTU: true, deviceBonded: true,
            adapterPowerState: true, adapterManufacturerAndVersion: true, adapterConnectable: true,
            adapterExperimentalFeatures: true, deviceAdvertisingDataExperimental: false)
        p.connectDeviceRejectsExisting = false
        p.advertisingCapabilitiesExperimental = false
        return p
    }()

    /// This profile with bluetoothd's `--experimental` on or off.
    public func experimental(_ on: Bool) -> BlueZProfile {
        var p = self
        p.experimental = on
        return p
    }

    // MARK: What is exported

    /// Adapters export `org.bluez.AdvertisementMonitorManager1`.
    public var exportsAdvertisementMonitorManager: Bool { advertisementMonitors && experimental }
    /// Adapter1 lists and answers `ConnectDevice`.
    public var exportsConnectDevice: Bool { experimental }
    /// Adapter1 has `PowerState`.
    public var exportsPowerState: Bool { adapterPowerState && (experimental || !adapterPowerStateExperimental) }
    /// Device1 has `AdvertisingData` (when some AD structure was kept raw) and `AdvertisingFlags`.
    public var exportsDeviceAdvertisingData: Bool { experimental || !deviceAdvertisingDataExperimental }
    /// LEAdvertisingManager1 has `SupportedFeatures` and `SupportedCapabilities`.
    public var exportsAdvertisingCapabilities: Bool {
        advertisingCapabilities && (experimental || !advertisingCapabilitiesExperimental)
    }
    /// `LEAdvertisement1.MinInterval`, `MaxInterval` and `TxPower` are read (else ignored).
    public var readsAdvertisementIntervals: Bool {
        advertisementIntervals && (experimental || !advertisingCapabilitiesExperimental)
    }
    /// Adapter1 has `ExperimentalFeatures`.
    public var exportsExperimentalFeatures: Bool { adapterExperimentalFeatures && !experimentalFeatures.isEmpty }

    /// "BlueZ 5.66", with " --experimental" when on.
    public var description: String { "BlueZ \(version)" + (experimental ? " --experimental" : "") }
}
