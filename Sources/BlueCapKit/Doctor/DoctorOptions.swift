// DoctorOptions: where BluetoothSession.diagnose looks on this machine, and what it may try.

// MARK: - DoctorOptions

/// Where ``BluetoothSession/diagnose(timeout:options:)`` reads this machine's state, and which
/// probes it makes. Each path may be nil: that check is then reported as not made (`info`), as
/// for a session on a simulated bus, whose bluetoothd is not this machine's.
public struct DoctorOptions: Sendable, Equatable {
    /// The rfkill switches' directory (`/sys/class/rfkill`): each `rfkillN/` with `type`, `name`,
    /// `soft` and `hard`. A directory that does not exist makes the rfkill check "unknown".
    public var rfkillRoot: String?
    /// bluetoothd's configuration (`/etc/bluetooth/main.conf`), read when readable.
    public var mainConf: String?
    /// dpkg's database (`/var/lib/dpkg/status`), where the installed `bluez` package's version
    /// is read; without it the version is "unknown" (bluetoothd does not say it over D-Bus).
    public var packageDatabase: String?
    /// Registers a throw-away pairing agent (`org.bluez.AgentManager1.RegisterAgent`, then
    /// `UnregisterAgent`) and an empty GATT application (`org.bluez.GattManager1.RegisterApplication`,
    /// refused by bluetoothd as empty, or unregistered at once) to learn whether the D-Bus policy
    /// allows them. Nothing stays registered; no advertisement is ever registered (it would
    /// transmit): `RegisterAdvertisement` is looked for by introspection.
    public var probeRegistrations: Bool

    /// The system's paths, probes on.
    public init(rfkillRoot: String? = "/sys/class/rfkill", mainConf: String? = "/etc/bluetooth/main.conf",
                packageDatabase: String? = "/var/lib/dpkg/status", probeRegistrations: Bool = true) {
        self.rfkillRoot = rfkillRoot
        self.mainConf = mainConf
        self.packageDatabase = packageDatabase
        self.probeRegistrations = probeRegistrations
    }

    /// Only the bus: no file of this machine is read (for a simulated bluetoothd).
    public static let busOnly = DoctorOptions(rfkillRoot: nil, mainConf: nil, packageDatabase: nil)
}
