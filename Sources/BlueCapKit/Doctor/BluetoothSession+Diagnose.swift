// BluetoothSession+Diagnose: what is wrong with this machine's Bluetooth, as findings.
import Futures

// MARK: - Diagnose

extension BluetoothSession {
    /// Checks what the library needs from the system and says, per check, what is wrong and how
    /// to fix it (a ``DoctorFinding`` each). Never fails: a check that cannot run is a finding.
    ///
    /// On the bus, with `timeout` for each call:
    /// - `bluetoothd`: `org.bluez` has an owner (`org.freedesktop.DBus.GetNameOwner`, as
    ///   ``checkAvailable(timeout:)``); when it has none the other bus checks are skipped;
    /// - `policy.call`: the D-Bus policy lets this user call bluetoothd
    ///   (`org.freedesktop.DBus.ObjectManager.GetManagedObjects`; `AccessDenied` is a problem);
    /// - `policy.agent`: `org.bluez.AgentManager1.RegisterAgent` of a throw-away agent, then
    ///   `UnregisterAgent`;
    /// - `adapters`, `adapter hciN`: the `org.bluez.Adapter1` objects, `Powered`, `PowerState`,
    ///   `Roles`;
    /// - `advertising hciN`: `org.bluez.LEAdvertisingManager1.SupportedInstances` (free) and
    ///   `ActiveInstances`;
    /// - `policy.advertisement`: `RegisterAdvertisement` listed by `Introspect` of the first
    ///   adapter (never called: it would transmit);
    /// - `policy.application`: `org.bluez.GattManager1.RegisterApplication` of an empty
    ///   application (bluetoothd reads it and refuses it as empty; if accepted it is unregistered
    ///   at once);
    /// - `experimental`: `org.bluez.AdvertisementMonitorManager1` exported, or
    ///   `Adapter1.ConnectDevice` introspected — what `bluetoothd --experimental` adds — detected
    ///   by what is exported, never by version.
    ///
    /// On this machine (paths in `options`; nil skips): `rfkill` (bluetooth switches' `soft` and
    /// `hard` in `/sys/class/rfkill`), `main.conf` (`Experimental`, `Cache`, `JustWorksRepairing`,
    /// `ControllerMode`, `[GATT] Channels` of `/etc/bluetooth/main.conf`) and `version`: bluetoothd
    /// does not say its version over D-Bus, so the releases its `Adapter1` properties fit
    /// (`Roles` 5.55, `PowerState` 5.66 — experimental until 5.73 —, `Manufacturer` 5.71,
    /// `Connectable` 5.79) are compared with
    /// the `bluez` package in dpkg's database; a package outside them is a warning (a bluetoothd
    /// built from source, or not restarted after an upgrade).
    ///
    /// The probes leave nothing registered. Print the result with ``DoctorFinding/table(_:)``
    /// or encode each finding as JSON.
    public func diagnose(timeout: Duration = .seconds(5), options: DoctorOptions = DoctorOptions()) -> Future<[DoctorFinding]> {
        let doctor = Doctor(session: self, timeout: timeout, options: options)
        let promise = Promise<[DoctorFinding]>()
        Task { promise.success(await doctor.run()) }
        return promise.future
    }
}
