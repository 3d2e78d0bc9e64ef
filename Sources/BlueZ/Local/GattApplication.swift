// GattApplication: a tree of local services exported under an ObjectManager root and
// registered with org.bluez.GattManager1.

import DBus
import Foundation
import Locking

// MARK: - GattApplication

/// A GATT application: an `org.freedesktop.DBus.ObjectManager` at ``root`` with the services at
/// `<root>/serviceN`, their characteristics at `<root>/serviceN/charM` and descriptors at
/// `<root>/serviceN/charM/descK` (N, M, K from 0, in array order).
public struct GattApplication: Sendable {
    /// The ObjectManager path passed to `RegisterApplication`.
    public var root: ObjectPath
    /// The services, in export order.
    public var services: [LocalGattService]

    /// An application.
    public init(root: ObjectPath = "/org/bluecap/gatt", services: [LocalGattService]) {
        self.root = root
        self.services = services
    }

    /// Exports the tree on `connection` (objects answer only `allowedCaller`, the unique name
    /// of `org.bluez`), then calls `org.bluez.GattManager1.RegisterApplication(root, {})` on
    /// `adapter`. On failure everything exported is removed again.
    public func register(on connection: Connection, adapter: ObjectPath, allowedCaller: String,
                         timeout: Duration = .seconds(25)) async throws(BlueZError) -> GattApplicationHandle {
        let handle = GattApplicationHandle(application: self, connection: connection, adapter: adapter)
        try await handle.registration.exportAndRegister(allowedCaller: allowedCaller, timeout: timeout)
        return handle
    }

    /// The registration's calls: `RegisterApplication(root, {})` and `UnregisterApplication(root)`
    /// on `adapter`; notifying states are reset before each reregistration and after unexporting.
    func calls(adapter: ObjectPath) -> RegistrationCalls {
        let manager = "org.bluez.GattManager1"
        return RegistrationCalls(
            path: root,
            export: { registration, caller throws(BlueZError) in try export(on: registration.connection, allowedCaller: caller) },
            register: RegistrationCalls.bluez(adapter, manager, "RegisterApplication", [.objectPath(root), .properties([:])]),
            unregister: RegistrationCalls.bluez(adapter, manager, "UnregisterApplication", [.objectPath(root)]),
            willReregister: { for s in services { for c in s.characteristics { c.resetNotifying() } } },
            didUnexport: {
                for s in services {
                    for c in s.characteristics {
                        c.attribute.state.withLock { $0.export = nil }
                        c.resetNotifying()
                        for d in c.descriptors { d.attribute.state.withLock { $0.export = nil } }
                    }
                }
            })
    }

    /// Exports every object; returns the handles in export order (root first).
    func export(on connection: Connection, allowedCaller: String) throws(BlueZError) -> [ExportHandle] {
        var handles: [ExportHandle] = []
        do {
            handles.append(try connection.exportObjectManager(at: root, allowedCaller: allowedCaller))
            for (n, service) in services.enumerated() {
                let sp = try child(root, "service\(n)")
                handles.append(try connection.export([service.dbusInterface()], at: sp, allowedCaller: allowedCaller))
                for (m, chrc) in service.characteristics.enumerated() {
                    let cp = try child(sp, "char\(m)")
                    let h = try connection.export([chrc.dbusInterface(service: sp)], at: cp, allowedCaller: allowedCaller)
                    chrc.attribute.state.withLock { $0.export = h }
                    handles.append(h)
                    for (k, desc) in chrc.descriptors.enumerated() {
                        let dp = try child(cp, "desc\(k)")
                        let dh = try connection.export([desc.dbusInterface(characteristic: cp)], at: dp, allowedCaller: allowedCaller)
                        desc.attribute.state.withLock { $0.export = dh }
                        handles.append(dh)
                    }
                }
            }
        } catch {
            for h in handles.reversed() { h.unexport() }
            throw BlueZError(kind: .failed, message: "exporting the application objects failed: \(error)", operation: "org.bluez.GattManager1.RegisterApplication", path: root.rawValue)
        }
        return handles
    }

    private func child(_ parent: ObjectPath, _ element: String) throws(DBusDecodingError) -> ObjectPath {
        try parent.appending(element)
    }
}

// MARK: - GattApplicationHandle

/// A registered (and exported) ``GattApplication``: its ``registration`` (``Registration``) with
/// `org.bluez.GattManager1`. ``unregister(timeout:)`` calls `UnregisterApplication` and then
/// removes the objects, last exported first. Releasing the handle without unregistering removes
/// the objects (bluetoothd then drops the application on its own).
public final class GattApplicationHandle: Sendable {
    /// The application.
    public let application: GattApplication
    /// The adapter it is registered on.
    public let adapter: ObjectPath
    /// The exports and the registration with `org.bluez.GattManager1`.
    public let registration: Registration

    init(application: GattApplication, connection: Connection, adapter: ObjectPath) {
        self.application = application
        self.adapter = adapter
        registration = Registration(connection: connection, calls: application.calls(adapter: adapter))
    }

    /// Whether `RegisterApplication` succeeded and no unregistration (or owner change) happened since.
    public var isRegistered: Bool { registration.isRegistered }

    /// The unique name allowed to call the objects; "" allows no one.
    public var allowedCaller: String? { registration.allowedCaller }

    /// Calls `org.bluez.GattManager1.RegisterApplication(root, {})` again with the exported
    /// objects, e.g. after bluetoothd restarted. Notifying states are reset first.
    public func reregister(allowedCaller: String, timeout: Duration = .seconds(25)) async throws(BlueZError) {
        try await registration.reregister(allowedCaller: allowedCaller, timeout: timeout)
    }

    /// Calls `org.bluez.GattManager1.UnregisterApplication(root)` (when registered), then removes
    /// the objects in reverse export order. Idempotent; returns the unregistration error, if any
    /// (the objects are removed regardless).
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        await registration.unregister(timeout: timeout)
    }
}
