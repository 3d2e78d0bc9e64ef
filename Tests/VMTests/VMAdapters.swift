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
    /// milliseconds even under TCG on a busy host; 15 s without an answer means it is stuck.
    static let answerTimeout: Duration = .seconds(15)

    /// `ObjectManager.GetManagedObjects` on org.bluez. When bluetoothd does not answer, the error
    /// says where its process is (scheduler state, kernel wait channel), not only "no reply".
    static func snapshot(_ connection: Connection) async throws -> AdapterSnapshot {
        do {
            let reply = try await connection.call(destination: "org.bluez", path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                                                  member: "GetManagedObjects", timeout: answerTimeout)
            return AdapterSnapshot(reply)
        } catch {
            throw VMTestError("bluetoothd did not answer GetManagedObjects (\(error)); \(bluetoothdState())")
        }
    }

    /// Waits until the adapters are clean (see ``AdapterSnapshot/isClean``), re-checking after each
    /// org.bluez signal (no polling), at most `timeout`; throws with what is left otherwise.
    /// bluetoothd answers `Device1.Disconnect` before it emits Connected=false (from an idle
    /// handler), and the remote side's device object follows later still: a test that only
    /// awaited its Disconnect reply can leave a link that is about to drop.
    @discardableResult
    static func settle(_ connection: Connection, timeout: Duration = .seconds(30)) async throws -> AdapterSnapshot {
        let signals = Collector<Int>()
        let subscription = connection.subscribe(rule: MatchRule(type: .signal, sender: "org.bluez")) { _ in signals.append(0) }
        defer { subscription.cancel() }
        try await subscription.established()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var seen = 0
        while true {
            seen = signals.items.count
            let state = try await snapshot(connection)
            if state.isClean { return state }
            guard clock.now < deadline else { throw VMTestError("adapters not back to their initial state after \(timeout): \(state)") }
            // The next signal (or the deadline) triggers the next look.
            _ = try? await signals.wait(for: seen + 1, timeout: deadline - clock.now)
        }
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
}
