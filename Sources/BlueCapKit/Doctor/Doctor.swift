// Doctor: the checks behind BluetoothSession.diagnose, in order, each turned into findings.
import BlueZ
import DBus
import Foundation
import Futures

// MARK: - Doctor

/// Runs every check of ``BluetoothSession/diagnose(timeout:options:)`` once. Bus checks use the
/// session's connection; each call has `timeout`. Local checks read files only.
struct Doctor: Sendable {
    let session: BluetoothSession
    let timeout: Duration
    let options: DoctorOptions

    /// Every finding: bluetoothd, the policy, the adapters (bus), then rfkill, main.conf and
    /// the version (files). When bluetoothd cannot be reached the bus checks are skipped.
    func run() async -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        let reachable = await reachability()
        findings.append(reachable)
        var outcome = BusChecks.Outcome(findings: [])
        if reachable.status != .problem, let connection = session.connection, let owner = session.tree?.status.owner {
            let bus = BusChecks(connection: connection, owner: owner, timeout: timeout, probe: options.probeRegistrations)
            outcome = await bus.run()
            findings += outcome.findings
        }
        findings += rfkill()
        findings += mainConf(experimentalSeen: outcome.experimental)
        findings.append(version(era: outcome.era))
        return findings
    }

    // MARK: bluetoothd

    /// `org.bluez` has an owner (``BluetoothSession/checkAvailable(timeout:)``).
    private func reachability() async -> DoctorFinding {
        let check = DoctorFinding.bluetoothdCheck
        do {
            try await session.checkAvailable(timeout: timeout).value
            let owner = session.tree?.status.owner ?? "?"
            let bus = session.bus == .system ? "the system bus" : "\(session.bus)"
            return DoctorFinding(check: check, status: .ok, cause: "org.bluez is owned by \(owner) on \(bus)")
        } catch let error as BlueCapError {
            let parts = error.message.components(separatedBy: " — ")
            return DoctorFinding(check: check, status: .problem, cause: parts[0],
                                 fix: parts.dropFirst().joined(separator: " — "))
        } catch {
            return DoctorFinding(check: check, status: .problem, cause: "\(error)", fix: "is bluetoothd running? (systemctl start bluetooth)")
        }
    }

    // MARK: rfkill

    /// The bluetooth switches under ``DoctorOptions/rfkillRoot``.
    func rfkill() -> [DoctorFinding] {
        guard let root = options.rfkillRoot else {
            return [DoctorFinding(check: "rfkill", status: .info, cause: "not checked (this session's bluetoothd is not this machine's)")]
        }
        guard let switches = SystemState.rfkill(root: root) else {
            return [DoctorFinding(check: "rfkill", status: .info, cause: "unknown: no \(root) (no rfkill support, or a container)")]
        }
        if switches.isEmpty {
            return [DoctorFinding(check: "rfkill", status: .info, cause: "no bluetooth switch in \(root)")]
        }
        return switches.map { s in
            let check = "rfkill \(s.name)"
            if s.hard {
                return DoctorFinding(check: check, status: .problem, cause: "\(s.id) is hard-blocked (a hardware switch, a key or the firmware)",
                                     fix: "turn the radio on with the machine's switch or key, or in the firmware setup")
            }
            if s.soft {
                return DoctorFinding(check: check, status: .problem, cause: "\(s.id) is soft-blocked",
                                     fix: "rfkill unblock bluetooth")
            }
            return DoctorFinding(check: check, status: .ok, cause: "\(s.id) is not blocked")
        }
    }

    // MARK: main.conf

    /// The settings of ``DoctorOptions/mainConf`` that change what the library sees.
    /// `experimentalSeen`: whether the adapters export experimental interfaces (nil: unknown).
    func mainConf(experimentalSeen: Bool?) -> [DoctorFinding] {
        guard let path = options.mainConf else {
            return [DoctorFinding(check: "main.conf", status: .info, cause: "not checked (this session's bluetoothd is not this machine's)")]
        }
        guard let conf = MainConf.read(path) else {
            return [DoctorFinding(check: "main.conf", status: .info, cause: "\(path) is absent or not readable: bluetoothd's defaults are assumed")]
        }
        var findings: [DoctorFinding] = []
        let set = [("Experimental", conf.experimental.map { $0 ? "true" : "false" }), ("Cache", conf.cache),
                   ("JustWorksRepairing", conf.justWorksRepairing), ("ControllerMode", conf.controllerMode),
                   ("Channels", conf.gattChannels)].compactMap { k, v in v.map { "\(k) = \($0)" } }
        findings.append(DoctorFinding(check: "main.conf", status: .info,
                                      cause: set.isEmpty ? "\(path): no setting that matters here (defaults)" : "\(path): \(set.joined(separator: ", "))"))
        if let mode = conf.controllerMode?.lowercased(), mode == "bredr" {
            findings.append(DoctorFinding(check: "main.conf ControllerMode", status: .problem,
                                          cause: "ControllerMode = bredr: Bluetooth Low Energy is off",
                                          fix: "ControllerMode = dual (or le) in [General] of \(path), then systemctl restart bluetooth"))
        }
        if conf.experimental == true, experimentalSeen == false {
            findings.append(DoctorFinding(check: "main.conf Experimental", status: .warning,
                                          cause: "Experimental = true, yet bluetoothd exports no experimental interface",
                                          fix: "systemctl restart bluetooth (it reads main.conf only when it starts)"))
        }
        if let cache = conf.cache?.lowercased(), cache == "no" {
            findings.append(DoctorFinding(check: "main.conf Cache", status: .info,
                                          cause: "Cache = no: every connection discovers the services again (slower connects)"))
        }
        if let repair = conf.justWorksRepairing?.lowercased(), repair == "always" {
            findings.append(DoctorFinding(check: "main.conf JustWorksRepairing", status: .warning,
                                          cause: "JustWorksRepairing = always: a device may replace a bond without asking",
                                          fix: "JustWorksRepairing = never (the default) or confirm in \(path)"))
        }
        if let channels = conf.gattChannels.flatMap({ Int($0) }), channels > 1 {
            findings.append(DoctorFinding(check: "main.conf Channels", status: .info,
                                          cause: "[GATT] Channels = \(channels): EATT, so notifications may arrive on several channels"))
        }
        return findings
    }

    // MARK: Version

    /// The BlueZ version: the releases the running bluetoothd's interfaces fit (`era`, nil when
    /// no adapter was seen) and the installed package's version, when the package database says
    /// it. A package outside the era is a warning: the bluetoothd running is not the package's.
    func version(era: InterfaceEra?) -> DoctorFinding {
        let running = era.map { "the running bluetoothd's Adapter1 is that of BlueZ \($0.description)" }
        guard let db = options.packageDatabase else {
            return DoctorFinding(check: "version", status: .info, cause: running ?? "unknown: no adapter to read the interfaces of")
        }
        guard let package = SystemState.packageVersion(database: db) else {
            return DoctorFinding(check: "version", status: .info,
                                 cause: [running, "no installed bluez package in \(db)"].compactMap { $0 }.joined(separator: "; "))
        }
        guard let era, let running else {
            return DoctorFinding(check: "version", status: .info, cause: "bluez package \(package) (\(db))")
        }
        if era.contains(version: package) == false {
            return DoctorFinding(check: "version", status: .warning,
                                 cause: "\(running), not the installed bluez package \(package): a bluetoothd built from source, or one not restarted after an upgrade",
                                 fix: "systemctl restart bluetooth; if it persists, see which binary the service runs (systemctl cat bluetooth)")
        }
        return DoctorFinding(check: "version", status: .info, cause: "bluez package \(package); \(running)")
    }
}
