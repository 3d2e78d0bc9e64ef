// VMAdapters: the state of the VM's adapters as bluetoothd publishes it, and the wait that keeps
// the VM tests isolated: every test starts from, and leaves, both adapters powered, not
// discovering, not advertising, with no device connected.

import DBus
import Foundation
import Glibc
import TestSupport

/// One `GetManagedObjects` look at hci0 + hci1 and their devices.
struct AdapterSnapshot: CustomStringConvertible {
    /// `Adapter1.Powered` per adapter name (`hci0`).
    var powered: [String: Bool] = [:]
    /// `Adapter1.Discovering` per adapter name.
    var discovering: [String: Bool] = [:]
    /// `LEAdvertisingManager1.ActiveInstances` per adapter name.
    var advertising: [String: UInt8] = [:]
    /// Device object paths whose `Device1.Connected` is true.
    var connected: [String] = []

    /// What every test starts from and must leave behind.
    var isClean: Bool {
        [VM.centralAdapter, VM.peripheralAdapter].allSatisfy { powered[$0] == true && discovering[$0] == false && (advertising[$0] ?? 0) == 0 }
            && connected.isEmpty
    }

    var description: String {
        "powered \(powered.sorted { $0.key < $1.key }), discovering \(discovering.sorted { $0.key < $1.key }), "
            + "advertisements \(advertising.sorted { $0.key < $1.key }), connected devices \(connected)"
    }

    init(_ reply: Message) {
        guard case .dict(_, _, let objects)? = reply.body.first else { return }
        for object in objects {
            guard case .objectPath(let path) = object.key, case .dict(_, _, let interfaces) = object.value.unwrapped else { continue }
            let name = path.rawValue.split(separator: "/").last.map(String.init) ?? ""
            for interface in interfaces {
                guard case .string(let iface) = interface.key, case .dict(_, _, let props) = interface.value.unwrapped else { continue }
                func value(_ key: String) -> DBusValue? {
                    props.first { if case .string(key) = $0.key { true } else { false } }?.value.unwrapped
                }
                switch iface {
                case "org.bluez.Adapter1":
                    if case .bool(let on)? = value("Powered") { powered[name] = on }
                    if case .bool(let on)? = value("Discovering") { discovering[name] = on }
                case "org.bluez.LEAdvertisingManager1":
                    if case .byte(let n)? = value("ActiveInstances") { advertising[name] = n }
                case "org.bluez.Device1":
                    if case .bool(true)? = value("Connected") { connected.append(path.rawValue) }
                default: break
                }
            }
        }
    }
}

extension VM {
    /// How long bluetoothd may take to answer one call. A healthy bluetoothd answers in
    /// milliseconds even under TCG on a busy host, but bluetoothd before 5.79 can stop answering
    /// D-Bus for up to its 30 s ATT transaction timeout after a link drops under one of its own
    /// GATT writes (README lesson 17): 40 s covers that stall; no answer after it means stuck.
    static let answerTimeout: Duration = .seconds(40)

    /// `ObjectManager.GetManagedObjects` on org.bluez. When bluetoothd does not answer, the error
    /// says where its process is (scheduler state, kernel wait channel) and how much CPU it
    /// burnt while we waited (busy in its main loop vs blocked), not only "no reply".
    static func snapshot(_ connection: Connection) async throws -> AdapterSnapshot {
        let cpuBefore = bluetoothdCPUSeconds()
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let reply = try await connection.call(destination: "org.bluez", path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                                                  member: "GetManagedObjects", timeout: answerTimeout)
            return AdapterSnapshot(reply)
        } catch {
            var cpu = ""
            if let before = cpuBefore, let after = bluetoothdCPUSeconds() {
                let waited = clock.now - start
                let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
                cpu = String(format: "; bluetoothd used %.1f s of CPU during the %.1f s wait", after - before, seconds)
            }
            throw VMTestError("bluetoothd did not answer GetManagedObjects (\(error)); \(bluetoothdState())\(cpu)")
        }
    }

    /// Runs `check` now and again after each org.bluez signal (no polling) until it returns a
    /// value or `timeout` passes; returns the value, or nil and the last result at the deadline.
    static func recheck<T>(_ connection: Connection, timeout: Duration,
                           _ check: () async throws -> T?) async throws -> T? {
        let signals = Collector<Int>()
        let subscription = connection.subscribe(rule: MatchRule(type: .signal, sender: "org.bluez")) { _ in signals.append(0) }
        defer { subscription.cancel() }
        try await subscription.established()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let seen = signals.items.count
            if let value = try await check() { return value }
            guard clock.now < deadline else { return nil }
            // The next signal (or the deadline) triggers the next look.
            _ = try? await signals.wait(for: seen + 1, timeout: deadline - clock.now)
        }
    }

    /// Waits until the adapters are clean (see ``AdapterSnapshot/isClean``), re-checking after each
    /// org.bluez signal, at most `timeout`; throws with what is left otherwise.
    /// bluetoothd answers `Device1.Disconnect` before it emits Connected=false (from an idle
    /// handler), and the remote side's device object follows later still: a test that only
    /// awaited its Disconnect reply can leave a link that is about to drop.
    @discardableResult
    static func settle(_ connection: Connection, timeout: Duration = .seconds(60)) async throws -> AdapterSnapshot {
        var last: AdapterSnapshot?
        let clean = try await recheck(connection, timeout: timeout) { () async throws -> AdapterSnapshot? in
            let state = try await snapshot(connection)
            last = state
            return state.isClean ? state : nil
        }
        guard let clean else {
            throw VMTestError("adapters not back to their initial state after \(timeout): \(last.map { "\($0)" } ?? "?")")
        }
        return clean
    }

    /// Waits, at most `timeout`, until bluetoothd's own GATT client on `adapter` has resolved the
    /// services of the remote device at `address` (`Device1.ServicesResolved` true on
    /// `/org/bluez/<adapter>/dev_…`). Returns whether it did. bluetoothd discovers every LE peer
    /// it is connected to, the peripheral's side included; a disconnection in the middle of it is
    /// what can make bluetoothd 5.66 stall (README lesson 17).
    static func servicesResolved(_ connection: Connection, adapter: String, address: String, timeout: Duration) async -> Bool {
        guard let path = try? ObjectPath(devicePath(adapter, address)) else { return false }
        let resolved = try? await recheck(connection, timeout: timeout) { () async -> Bool? in
            if case .bool(true)? = try? await property(connection, path, "org.bluez.Device1", "ServicesResolved") { return true }
            return nil
        }
        return resolved == true
    }

    /// bluetoothd's process state from /proc (for failure messages): pid, State, wchan, syscall.
    static func bluetoothdState() -> String {
        guard let pid = bluetoothdPID() else { return "no bluetoothd process" }
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let state = status.split(separator: "\n").first { $0.hasPrefix("State:") } ?? "State: ?"
        let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
        let syscall = (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        return "bluetoothd pid \(pid) \(state), wchan \(wchan), syscall \(syscall)"
    }

    /// User + system CPU time bluetoothd has used so far (/proc/<pid>/stat fields 14 and 15).
    static func bluetoothdCPUSeconds() -> Double? {
        guard let pid = bluetoothdPID(),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)": state is field 3, so utime (14) and stime (15) are at 11 and 12.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
