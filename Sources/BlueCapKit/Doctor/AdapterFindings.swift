// AdapterFindings: what an adapter's properties and introspection say — power, roles,
// advertising instances, experimental interfaces.
import BlueZ
import DBus

// MARK: - AdapterFindings

/// Turns one adapter's interfaces (from `GetManagedObjects`) and introspection into findings.
/// Experimental interfaces are detected by what is exported, never by a version number.
enum AdapterFindings {
    private static func name(_ path: String) -> String { Adapter1.name(of: (try? ObjectPath(path)) ?? "/") }

    /// `Adapter1.Powered`, `PowerState` (5.66+) and `Roles`.
    static func state(path: String, _ interfaces: [String: [String: DBusValue]]) -> DoctorFinding {
        let p = Adapter1.Properties(interfaces["org.bluez.Adapter1"] ?? [:])
        let check = "adapter \(name(path))"
        let roles = p.roles.map { $0.isEmpty ? "no LE role" : "roles \($0.joined(separator: ", "))" } ?? "roles not said (Adapter1.Roles: BlueZ 5.55+)"
        let what = "\(p.address ?? "?")" + (p.alias.map { " \"\($0)\"" } ?? "")
        if p.powerState == "off-blocked" {
            return DoctorFinding(check: check, status: .problem, cause: "\(what) is off and blocked by rfkill (PowerState off-blocked)", fix: "rfkill unblock bluetooth")
        }
        if p.powered != true {
            return DoctorFinding(check: check, status: .warning, cause: "\(what) is not powered; \(roles)",
                                 fix: "bluetoothctl power on (or AutoEnable = true in [Policy] of main.conf); the managers power it when asked")
        }
        return DoctorFinding(check: check, status: .ok, cause: "\(what) powered; \(roles)")
    }

    /// `LEAdvertisingManager1.SupportedInstances` (free) and `ActiveInstances` (in use).
    static func advertising(path: String, _ interfaces: [String: [String: DBusValue]]) -> DoctorFinding {
        let check = "advertising \(name(path))"
        guard let m = interfaces["org.bluez.LEAdvertisingManager1"] else {
            return DoctorFinding(check: check, status: .warning, cause: "no LEAdvertisingManager1: this adapter cannot advertise (no LE, or not powered yet)",
                                 fix: "power the adapter; an LE controller is needed for the peripheral role")
        }
        let free: UInt8? = if case .byte(let b)? = m["SupportedInstances"] { b } else { nil }
        let active: UInt8? = if case .byte(let b)? = m["ActiveInstances"] { b } else { nil }
        guard let free else {
            return DoctorFinding(check: check, status: .info, cause: "SupportedInstances not said")
        }
        let inUse = active.map { ", \($0) in use" } ?? ""
        if free == 0 {
            return DoctorFinding(check: check, status: .warning, cause: "no advertising instance left\(inUse): RegisterAdvertisement will fail (Maximum advertisements reached)",
                                 fix: "stop another advertiser (bluetoothctl advertise off, or the program that registered it)")
        }
        return DoctorFinding(check: check, status: .ok, cause: "\(free) advertising instance\(free == 1 ? "" : "s") free\(inUse)")
    }

    /// Introspection lists `LEAdvertisingManager1.RegisterAdvertisement`: the call the peripheral
    /// role makes. Never called (an advertisement would transmit); the policy that allowed
    /// GetManagedObjects and Introspect allows it too unless it names the method.
    static func advertisementPolicy(path: String, introspection xml: String) -> DoctorFinding {
        if xml.contains("name=\"RegisterAdvertisement\"") {
            return DoctorFinding(check: "policy.advertisement", status: .ok,
                                 cause: "RegisterAdvertisement offered on \(name(path)) (not registered: it would transmit)")
        }
        return DoctorFinding(check: "policy.advertisement", status: .warning, cause: "\(name(path)) offers no RegisterAdvertisement",
                             fix: "power the adapter; an LE controller is needed for the peripheral role")
    }

    /// `AdvertisementMonitorManager1` on any adapter (passive scanning) and `Adapter1.ConnectDevice`
    /// in introspection: bluetoothd's experimental interfaces. Returns the finding and whether
    /// any is there.
    static func experimental(objects: [String: [String: [String: DBusValue]]], adapters: [String],
                             introspections: [String: String]) -> (DoctorFinding, Bool) {
        let monitors = adapters.filter { objects[$0]?["org.bluez.AdvertisementMonitorManager1"] != nil }
        let connectDevice = adapters.filter { introspections[$0]?.contains("name=\"ConnectDevice\"") == true }
        let features = adapters.compactMap { objects[$0]?["org.bluez.Adapter1"]?["ExperimentalFeatures"] }.isEmpty ? "" : "; kernel experimental features on"
        if !monitors.isEmpty || !connectDevice.isEmpty {
            var have: [String] = []
            if !monitors.isEmpty { have.append("AdvertisementMonitorManager1 (passive scanning)") }
            if !connectDevice.isEmpty { have.append("Adapter1.ConnectDevice") }
            if monitors.isEmpty {
                return (DoctorFinding(check: "experimental", status: .info,
                                      cause: "bluetoothd's experimental interfaces are on (\(have.joined(separator: ", "))), but it has no "
                                        + "AdvertisementMonitorManager1 (BlueZ 5.56+): passive scanning is unavailable\(features)",
                                      fix: "a bluetoothd of BlueZ 5.56 or later for passive scanning"), true)
            }
            return (DoctorFinding(check: "experimental", status: .ok, cause: "bluetoothd's experimental interfaces are on: \(have.joined(separator: ", "))\(features)"), true)
        }
        return (DoctorFinding(check: "experimental", status: .info,
                              cause: "no AdvertisementMonitorManager1 nor ConnectDevice: passive scanning is unavailable\(features)",
                              fix: "Experimental = true in [General] of /etc/bluetooth/main.conf (or bluetoothd --experimental), then systemctl restart bluetooth"), false)
    }
}
