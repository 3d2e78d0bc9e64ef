// AdvertisementMonitorApplication: monitors exported under an ObjectManager root and registered
// with org.bluez.AdvertisementMonitorManager1 (BlueZ's passive scanning, experimental in 5.66).

import DBus

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
        let handle = AdvertisementMonitorHandle(root: root, adapter: adapter,
                                                registration: Registration(connection: connection, calls: calls(adapter: adapter, events: events)))
        try await handle.registration.exportAndRegister(allowedCaller: allowedCaller, timeout: timeout)
        return handle
    }

    /// The registration's calls: the ObjectManager root and `<root>/monitorN`,
    /// `RegisterMonitor(root)` and `UnregisterMonitor(root)` on `adapter`.
    func calls(adapter: ObjectPath, events: @escaping @Sendable (Int, AdvertisementMonitorEvent) -> Void) -> RegistrationCalls {
        let manager = AdvertisementMonitorManager1.interface
        return RegistrationCalls(
            path: root,
            export: { registration, caller throws(BlueZError) in
                let connection = registration.connection
                var exports: [ExportHandle] = []
                do {
                    exports.append(try connection.exportObjectManager(at: root, allowedCaller: caller))
                    for (n, monitor) in monitors.enumerated() {
                        let path = try root.appending("monitor\(n)")
                        exports.append(try connection.export([monitor.dbusInterface { events(n, $0) }], at: path, allowedCaller: caller))
                    }
                } catch {
                    for h in exports.reversed() { h.unexport() }
                    throw BlueZError(kind: .failed, message: "exporting the monitors failed: \(error)",
                                     operation: "org.bluez.AdvertisementMonitorManager1.RegisterMonitor", path: root.rawValue)
                }
                return exports
            },
            register: RegistrationCalls.bluez(adapter, manager, "RegisterMonitor", [.objectPath(root)]),
            unregister: RegistrationCalls.bluez(adapter, manager, "UnregisterMonitor", [.objectPath(root)]))
    }
}

// MARK: - AdvertisementMonitorHandle

/// A registered ``AdvertisementMonitorApplication``: its ``registration`` (``Registration``) with
/// `org.bluez.AdvertisementMonitorManager1`. ``unregister(timeout:)`` calls `UnregisterMonitor(root)`
/// and removes the objects; releasing the handle removes the objects (bluetoothd then drops the
/// monitors on its own).
public final class AdvertisementMonitorHandle: Sendable {
    /// The application's root.
    public let root: ObjectPath
    /// The adapter it is registered on.
    public let adapter: ObjectPath
    /// The exports and the registration with `org.bluez.AdvertisementMonitorManager1`.
    public let registration: Registration

    init(root: ObjectPath, adapter: ObjectPath, registration: Registration) {
        self.root = root
        self.adapter = adapter
        self.registration = registration
    }

    /// Calls `org.bluez.AdvertisementMonitorManager1.UnregisterMonitor(root)` (when registered),
    /// then removes the objects. Idempotent; returns the unregistration error, if any.
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        await registration.unregister(timeout: timeout)
    }
}
