// AdvertisementMonitorApplication: monitors exported under an ObjectManager root and registered
// with org.bluez.AdvertisementMonitorManager1 (BlueZ's passive scanning, experimental in 5.66).

import DBus
import Locking

// MARK: - AdvertisementMonitorManager1

/// `org.bluez.AdvertisementMonitorManager1` on an adapter. bluetoothd 5.66 exports it only when
/// it runs with `--experimental` (`-E`) or `Experimental = true` in `/etc/bluetooth/main.conf`.
public enum AdvertisementMonitorManager1 {
    /// `org.bluez.AdvertisementMonitorManager1`.
    public static let interface = "org.bluez.AdvertisementMonitorManager1"

    /// The error for an adapter without the interface: the cause and how to enable it.
    public static func missingMessage(adapter: ObjectPath) -> String {
        "\(interface) is missing on \(adapter.rawValue): bluetoothd runs without --experimental; "
            + "set `Experimental = true` in the [General] section of /etc/bluetooth/main.conf "
            + "(or start bluetoothd with -E) and restart bluetoothd"
    }
}

// MARK: - AdvertisementMonitorApplication

/// Monitors exported at `<root>/monitorN` (N from 0, in array order) under an
/// `org.freedesktop.DBus.ObjectManager` at ``root``.
public struct AdvertisementMonitorApplication: Sendable {
    /// The path passed to `RegisterMonitor`.
    public var root: ObjectPath
    /// The monitors.
    public var monitors: [AdvertisementMonitor]

    /// An application.
    public init(root: ObjectPath, monitors: [AdvertisementMonitor]) {
        self.root = root
        self.monitors = monitors
    }

    /// Exports the objects on `connection` (answering only `allowedCaller`, bluetoothd's unique
    /// name), then calls `org.bluez.AdvertisementMonitorManager1.RegisterMonitor(root)` on
    /// `adapter`. Each monitor's calls reach `events` with the monitor's index. On failure
    /// everything exported is removed again.
    public func register(on connection: Connection, adapter: ObjectPath, allowedCaller: String,
                         timeout: Duration = .seconds(10),
                         events: @escaping @Sendable (Int, AdvertisementMonitorEvent) -> Void)
        async throws(BlueZError) -> AdvertisementMonitorHandle {
        var exports: [ExportHandle] = []
        do {
            exports.append(try connection.exportObjectManager(at: root, allowedCaller: allowedCaller))
            for (n, monitor) in monitors.enumerated() {
                let path = try root.appending("monitor\(n)")
                exports.append(try connection.export([monitor.dbusInterface { events(n, $0) }], at: path, allowedCaller: allowedCaller))
            }
        } catch {
            for h in exports.reversed() { h.unexport() }
            throw BlueZError(kind: .failed, message: "exporting the monitors failed: \(error)",
                             operation: "org.bluez.AdvertisementMonitorManager1.RegisterMonitor", path: root.rawValue)
        }
        let handle = AdvertisementMonitorHandle(root: root, connection: connection, adapter: adapter, exports: exports)
        do {
            _ = try await connection.call(destination: "org.bluez", path: adapter, interface: AdvertisementMonitorManager1.interface,
                                          member: "RegisterMonitor", arguments: [.objectPath(root)], timeout: timeout)
        } catch {
            handle.unexport()
            throw BlueZError(error, operation: "org.bluez.AdvertisementMonitorManager1.RegisterMonitor", path: adapter.rawValue)
        }
        handle.markRegistered()
        return handle
    }
}

// MARK: - AdvertisementMonitorHandle

/// A registered ``AdvertisementMonitorApplication``. ``unregister()`` calls
/// `UnregisterMonitor(root)` and removes the objects; releasing the handle removes the objects
/// (bluetoothd then drops the monitors on its own).
public final class AdvertisementMonitorHandle: Sendable {
    /// The application's root.
    public let root: ObjectPath
    /// The adapter it is registered on.
    public let adapter: ObjectPath
    private let connection: Connection
    private struct State {
        var exports: [ExportHandle]
        var registered = false
    }
    // Sendable through this lock; no call is made while holding it.
    private let state: Locked<State>

    init(root: ObjectPath, connection: Connection, adapter: ObjectPath, exports: [ExportHandle]) {
        self.root = root
        self.connection = connection
        self.adapter = adapter
        state = Locked(State(exports: exports))
    }

    deinit { unexport() }

    func markRegistered() { state.withLock { $0.registered = true } }

    /// Whether `RegisterMonitor` succeeded and no unregistration happened since.
    public var isRegistered: Bool { state.withLock { $0.registered } }

    /// `org.bluez.AdvertisementMonitorManager1.UnregisterMonitor(root)` (when registered), then
    /// removes the objects. Idempotent; returns the unregistration error, if any.
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        let wasRegistered = state.withLock { s -> Bool in
            defer { s.registered = false }
            return s.registered
        }
        var failure: BlueZError?
        if wasRegistered {
            do {
                _ = try await connection.call(destination: "org.bluez", path: adapter, interface: AdvertisementMonitorManager1.interface,
                                              member: "UnregisterMonitor", arguments: [.objectPath(root)], timeout: timeout)
            } catch {
                failure = BlueZError(error, operation: "org.bluez.AdvertisementMonitorManager1.UnregisterMonitor", path: adapter.rawValue)
            }
        }
        unexport()
        return failure
    }

    /// Removes the objects, last exported first.
    func unexport() {
        let exports = state.withLock { s -> [ExportHandle] in
            defer { s.exports = [] }
            return s.exports
        }
        for h in exports.reversed() { h.unexport() }
    }
}
