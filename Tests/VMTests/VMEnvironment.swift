// VMEnvironment: what the real-BlueZ tests need from the VM (Scripts/bluez-vm): whether they run
// at all, the adapters' addresses, child processes (our example peripheral, a restarted
// bluetoothd) and adapter power through org.bluez.

import BlueCapKit
import DBus
import Foundation
import Glibc
import TestSupport

enum VM {
    /// The tests run only inside the VM, where `Scripts/bluez-vm/test-vm` sets `BLUECAP_VM=1`.
    static let enabled = ProcessInfo.processInfo.environment["BLUECAP_VM"] == "1"

    /// Writable directory kept on the host after the run (the run directory), else /tmp.
    static let logDirectory = ProcessInfo.processInfo.environment["BLUEZ_VM_RUNDIR"] ?? "/tmp"

    /// The directory holding the built executables: the test bundle's (`swift build` puts the
    /// products and the test bundle side by side).
    static let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path

    /// The bluetoothd version under test (`BLUEZ_VERSION` of Scripts/bluez-vm; 5.66 when unset).
    static let bluezVersion = ProcessInfo.processInfo.environment["BLUEZ_VM_BLUEZ_VERSION"] ?? "5.66"

    /// Whether bluetoothd exports `Device1.Bonded` (BlueZ 5.65 and later). Without it (5.55,
    /// Debian 11) a bonded device only says `Paired`, and `Peripheral.isBonded` stays false.
    static let exportsBonded = bluezVersion.split(separator: ".").compactMap { Int($0) }
        .lexicographicallyPrecedes([5, 65]) == false

    static let centralAdapter = "hci0"
    static let peripheralAdapter = "hci1"

    // MARK: - org.bluez helpers

    /// bluetoothd's object path for the device at `address` on `adapter`.
    static func devicePath(_ adapter: String, _ address: String) -> String {
        "/org/bluez/\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }

    /// `org.freedesktop.DBus.Properties.Get(interface, name)` on an org.bluez object.
    static func property(_ connection: Connection, _ path: ObjectPath, _ interface: String, _ name: String) async throws -> DBusValue? {
        let reply = try await connection.call(destination: "org.bluez", path: path,
                                              interface: "org.freedesktop.DBus.Properties", member: "Get",
                                              arguments: [.string(interface), .string(name)], timeout: answerTimeout)
        return reply.body.first?.unwrapped
    }

    /// The adapter's address (`Adapter1.Address`).
    static func address(_ connection: Connection, _ adapter: String) async throws -> String {
        guard case .string(let a)? = try await property(connection, try ObjectPath("/org/bluez/\(adapter)"), "org.bluez.Adapter1", "Address") else {
            throw VMTestError("no Address on \(adapter)")
        }
        return a
    }

    /// Sets `Adapter1.Powered` (bluetoothd replies once mgmt changed the power state).
    static func setPowered(_ connection: Connection, _ adapter: String, _ on: Bool) async throws {
        _ = try await connection.call(destination: "org.bluez", path: try ObjectPath("/org/bluez/\(adapter)"),
                                      interface: "org.freedesktop.DBus.Properties", member: "Set",
                                      arguments: [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.bool(on))],
                                      timeout: answerTimeout)
    }

    // MARK: - bluetoothd

    /// The running bluetoothd's pid (from /proc/<pid>/comm), if any.
    static func bluetoothdPID() -> pid_t? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = pid_t(entry),
                  let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8) else { continue }
            if comm.trimmingCharacters(in: .whitespacesAndNewlines) == "bluetoothd" { return pid }
        }
        return nil
    }

    /// Starts bluetoothd as `Scripts/bluez-vm/guest/bluez-up` does (`BLUEZ_VM_BLUETOOTHD`, the
    /// binary of the BlueZ version under test, with `-n` plus `BLUEZ_VM_BLUETOOTHD_ARGS`),
    /// logging to `bluetoothd-restarted.log`. It outlives the test process: the VM's init reaps it.
    static func startBluetoothd() throws -> pid_t {
        let environment = ProcessInfo.processInfo.environment
        let args = (environment["BLUEZ_VM_BLUETOOTHD_ARGS"] ?? "-d").split(separator: " ").map(String.init)
        let binary = environment["BLUEZ_VM_BLUETOOTHD"] ?? "/usr/libexec/bluetooth/bluetoothd"
        return try spawn(binary, ["-n"] + args, log: logDirectory + "/bluetoothd-restarted.log")
    }

    // MARK: - child processes

    /// Starts `path` through ``CleanSpawn`` (empty signal mask, default dispositions: Swift
    /// Testing's threads block signals), stdin /dev/null, stdout + stderr appended to `log`.
    static func spawn(_ path: String, _ arguments: [String], log: String) throws -> pid_t {
        let fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw VMTestError("open \(log): errno \(errno)") }
        defer { close(fd) }
        do {
            return try CleanSpawn.spawn(path, arguments: arguments,
                                        redirections: [0: .null(write: false), 1: .descriptor(fd), 2: .descriptor(fd)])
        } catch {
            throw VMTestError("\(error)")
        }
    }

    /// Kills `pid` with `signal` and reaps it (a blocking waitpid off the cooperative pool,
    /// bounded by `timeout`). Returns the raw wait status.
    static func killAndReap(_ pid: pid_t, _ signal: Int32 = SIGKILL, timeout: Duration = .seconds(10)) async throws -> Int32 {
        kill(pid, signal)
        let status = Collector<Int32>()
        Thread.detachNewThread {
            var s: Int32 = 0
            while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
            status.append(s)
        }
        return try await status.wait(for: 1, timeout: timeout)[0]
    }

    /// The last `lines` lines of a log file in ``logDirectory``, for failure messages.
    static func tail(_ file: String, lines: Int = 30) -> String {
        let text = (try? String(contentsOfFile: logDirectory + "/" + file, encoding: .utf8)) ?? "(no \(file))"
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}

/// A VM test step failed.
struct VMTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Collects a FutureStream's values for awaiting with a deadline.
func collect<T: Sendable>(_ stream: FutureStream<T>) -> Collector<T> {
    let c = Collector<T>()
    stream.onSuccess(context: .immediate) { c.append($0) }
    return c
}
