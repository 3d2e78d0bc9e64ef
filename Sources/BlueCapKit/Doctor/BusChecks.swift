// BusChecks: what the doctor asks bluetoothd — whether the D-Bus policy lets this program call
// it and register with it, and what its adapters offer.
import BlueZ
import DBus
import Foundation
import Locking

// MARK: - BusChecks

/// The doctor's checks over the bus, against the `org.bluez` owner `owner`. Every call has
/// `timeout`; every probe registration is undone before the check returns.
struct BusChecks: Sendable {
    let connection: Connection
    let owner: String
    let timeout: Duration
    let probe: Bool

    /// bluetoothd's objects: path → interface → property (variants unwrapped).
    typealias Objects = [String: [String: [String: DBusValue]]]

    private static let probes = Locked(0)

    /// What the bus said: the findings, whether any adapter exports an experimental interface
    /// and the releases the adapters' interfaces fit (both nil when no adapter was seen).
    struct Outcome: Sendable {
        var findings: [DoctorFinding]
        var experimental: Bool?
        var era: InterfaceEra?
    }

    /// Every bus check, in order.
    func run() async -> Outcome {
        // The policy lets this program call org.bluez at all: ObjectManager.GetManagedObjects.
        let objects: Objects
        switch await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects") {
        case .success(let m):
            objects = Self.decode(m.body.first)
            let count = objects.count
            var findings = [DoctorFinding(check: "policy.call", status: .ok, cause: "org.bluez answers this user (GetManagedObjects: \(count) objects)")]
            findings += await agentProbe()
            var outcome = await adapters(objects)
            outcome.findings = findings + outcome.findings
            return outcome
        case .failure(let e):
            return Outcome(findings: [policyFailure("policy.call", "GetManagedObjects", e)])
        }
    }

    // MARK: Policy probes

    /// A finding for a call that failed: refused by the policy (a problem), else unanswered.
    private func policyFailure(_ check: String, _ call: String, _ error: DBusCallError) -> DoctorFinding {
        if case .remote(let r) = error, r.name == DBusRemoteError.accessDenied {
            return DoctorFinding(check: check, status: .problem, cause: "the D-Bus policy refuses \(call) to this user (AccessDenied)",
                                 fix: "run as root or as a member of the group /etc/dbus-1/system.d/bluetooth.conf allows "
                                    + "(often bluetooth: usermod -aG bluetooth $USER, then log in again)")
        }
        return DoctorFinding(check: check, status: .warning, cause: "\(call) failed: \(error)", fix: "is bluetoothd busy or hung? (journalctl -u bluetooth)")
    }

    /// Registers a throw-away agent and unregisters it at once (`AgentManager1.RegisterAgent`,
    /// `UnregisterAgent`): the pairing agent's permission.
    private func agentProbe() async -> [DoctorFinding] {
        guard probe else { return [] }
        let path = Self.probePath("agent")
        let agent = LocalAgent(path: path, capability: .noInputNoOutput, handler: { $0.reply(.reject) })
        do {
            let handle = try await agent.register(on: connection, allowedCaller: owner, asDefault: false, timeout: timeout)
            if let e = await handle.unregister(timeout: timeout) {
                return [DoctorFinding(check: "policy.agent", status: .warning, cause: "RegisterAgent succeeded, UnregisterAgent failed: \(e)")]
            }
            return [DoctorFinding(check: "policy.agent", status: .ok, cause: "RegisterAgent and UnregisterAgent allowed (a pairing agent can be registered)")]
        } catch {
            if error.kind == .accessDenied {
                return [DoctorFinding(check: "policy.agent", status: .problem, cause: "the D-Bus policy refuses RegisterAgent to this user (AccessDenied): pairing needs an agent",
                                      fix: "run as root or in the group bluetooth.conf allows (usermod -aG bluetooth $USER)")]
            }
            if error.kind == .alreadyExists {
                return [DoctorFinding(check: "policy.agent", status: .ok, cause: "this connection already has an agent registered (RegisterAgent allowed)")]
            }
            return [DoctorFinding(check: "policy.agent", status: .warning, cause: "RegisterAgent failed: \(error)")]
        }
    }

    /// Registers an empty GATT application (`GattManager1.RegisterApplication`): bluetoothd reads
    /// it (`ObjectManager.GetManagedObjects` on this program) and refuses it as empty, or accepts
    /// it and it is unregistered at once.
    private func applicationProbe(adapter: String) async -> DoctorFinding {
        let check = "policy.application"
        let app = GattApplication(root: Self.probePath("app"), services: [])
        do {
            let handle = try await app.register(on: connection, adapter: try ObjectPath(adapter), allowedCaller: owner, timeout: timeout)
            _ = await handle.unregister(timeout: timeout)
            return DoctorFinding(check: check, status: .ok, cause: "RegisterApplication allowed on \(Adapter1.name(of: try ObjectPath(adapter))) (and unregistered)")
        } catch let error as BlueZError {
            switch error.kind {
            case .accessDenied:
                return DoctorFinding(check: check, status: .problem, cause: "the D-Bus policy refuses RegisterApplication (AccessDenied): no GATT server",
                                     fix: "run as root or in the group bluetooth.conf allows (usermod -aG bluetooth $USER)")
            case .timeout:
                return DoctorFinding(check: check, status: .warning,
                                     cause: "RegisterApplication was not answered: bluetoothd may not be allowed to call this program back",
                                     fix: "bluetooth.conf's root policy needs send_interface org.freedesktop.DBus.ObjectManager")
            default:
                return DoctorFinding(check: check, status: .ok, cause: "RegisterApplication allowed (an empty application was refused as expected: \(error.errorName))")
            }
        } catch {
            return DoctorFinding(check: check, status: .warning, cause: "RegisterApplication failed: \(error)")
        }
    }

    // MARK: Adapters

    private func adapters(_ objects: Objects) async -> Outcome {
        let paths = objects.keys.filter { objects[$0]?["org.bluez.Adapter1"] != nil }.sorted()
        guard let first = paths.first else {
            return Outcome(findings: [DoctorFinding(check: "adapters", status: .problem, cause: "bluetoothd sees no adapter (no controller, or its driver or firmware is missing)",
                                                    fix: "plug in a controller; dmesg | grep -i bluetooth shows driver and firmware errors")])
        }
        var findings = [DoctorFinding(check: "adapters", status: .ok, cause: "\(paths.count) adapter\(paths.count == 1 ? "" : "s"): "
                                      + paths.map { Adapter1.name(of: (try? ObjectPath($0)) ?? "/") }.joined(separator: ", "))]
        var introspections: [String: String] = [:]
        for path in paths {
            let interfaces = objects[path] ?? [:]
            findings.append(AdapterFindings.state(path: path, interfaces))
            findings.append(AdapterFindings.advertising(path: path, interfaces))
            switch await call(path, "org.freedesktop.DBus.Introspectable", "Introspect") {
            case .success(let m): if case .string(let xml)? = m.body.first { introspections[path] = xml }
            case .failure(let e): if path == first { findings.append(policyFailure("policy.advertisement", "Introspect", e)) }
            }
        }
        if let xml = introspections[first] { findings.append(AdapterFindings.advertisementPolicy(path: first, introspection: xml)) }
        if probe { findings.append(await applicationProbe(adapter: first)) }
        let (experimental, seen) = AdapterFindings.experimental(objects: objects, adapters: paths, introspections: introspections)
        findings.append(experimental)
        let era = InterfaceEra(adapterProperties: Set(objects[first]?["org.bluez.Adapter1"].map { Array($0.keys) } ?? []), experimental: seen)
        return Outcome(findings: findings, experimental: seen, era: era)
    }

    // MARK: Calls

    private func call(_ path: String, _ interface: String, _ member: String) async -> Result<Message, DBusCallError> {
        guard let op = try? ObjectPath(path) else { return .failure(.invalidMessage("bad path \(path)")) }
        do {
            return .success(try await connection.call(destination: bluezBusName, path: op, interface: interface, member: member, timeout: timeout))
        } catch { return .failure(error) }
    }

    /// A path no other probe of this process uses (`/org/bluecap/doctor/N/kind`).
    private static func probePath(_ kind: String) -> ObjectPath {
        let n = probes.withLock { n -> Int in n += 1; return n }
        return (try? ObjectPath("/org/bluecap/doctor/p\(getpid())_\(n)/\(kind)")) ?? "/org/bluecap/doctor"
    }

    /// `a{oa{sa{sv}}}` as nested dictionaries.
    static func decode(_ value: DBusValue?) -> Objects {
        guard case .dict(_, _, let entries)? = value else { return [:] }
        var out: Objects = [:]
        for e in entries {
            guard case .objectPath(let p) = e.key, case .dict(_, _, let ifaces) = e.value else { continue }
            var map: [String: [String: DBusValue]] = [:]
            for i in ifaces {
                guard case .string(let name) = i.key, case .dict(_, _, let props) = i.value else { continue }
                var d: [String: DBusValue] = [:]
                for prop in props { if case .string(let k) = prop.key { d[k] = prop.value.unwrapped } }
                map[name] = d
            }
            out[p.rawValue] = map
        }
        return out
    }
}
