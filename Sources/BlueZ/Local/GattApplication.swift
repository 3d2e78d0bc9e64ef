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
        let exports = try export(on: connection, allowedCaller: allowedCaller)
        let handle = GattApplicationHandle(application: self, connection: connection, adapter: adapter, exports: exports)
        do {
            try await handle.registerWithBlueZ(timeout: timeout)
        } catch {
            handle.unexport()
            throw error
        }
        return handle
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

/// A registered (and exported) ``GattApplication``. ``unregister()`` calls
/// `GattManager1.UnregisterApplication` and then removes the objects, last exported first.
/// Releasing the handle without unregistering removes the objects (bluetoothd then drops the
/// application on its own).
public final class GattApplicationHandle: Sendable {
    /// The application.
    public let application: GattApplication
    /// The adapter it is registered on.
    public let adapter: ObjectPath
    private let connection: Connection
    private struct State {
        var exports: [ExportHandle]
        var registered = false
    }
    // Sendable through this lock; no call is made while holding it.
    private let state: Locked<State>

    init(application: GattApplication, connection: Connection, adapter: ObjectPath, exports: [ExportHandle]) {
        self.application = application
        self.connection = connection
        self.adapter = adapter
        state = Locked(State(exports: exports))
    }

    deinit { unexport() }

    /// Whether `RegisterApplication` succeeded and no unregistration happened since.
    public var isRegistered: Bool { state.withLock { $0.registered } }

    /// Whether the objects are still exported.
    public var isExported: Bool { state.withLock { !$0.exports.isEmpty } }

    /// The unique name allowed to call the objects; "" allows no one. Set it when `org.bluez`
    /// changes owner.
    public var allowedCaller: String? {
        get { state.withLock { $0.exports.first?.allowedCaller } }
        set { for h in state.withLock({ $0.exports }) { h.allowedCaller = newValue } }
    }

    /// `org.bluez.GattManager1.RegisterApplication(root, {})` again with the exported objects,
    /// e.g. after bluetoothd restarted. Notifying states are reset first.
    public func reregister(allowedCaller: String, timeout: Duration = .seconds(25)) async throws(BlueZError) {
        state.withLock { $0.registered = false }
        self.allowedCaller = allowedCaller
        for s in application.services { for c in s.characteristics { c.resetNotifying() } }
        try await registerWithBlueZ(timeout: timeout)
    }

    func registerWithBlueZ(timeout: Duration) async throws(BlueZError) {
        let op = "org.bluez.GattManager1.RegisterApplication"
        guard isExported else { throw BlueZError(kind: .doesNotExist, message: "the application was unexported", operation: op) }
        do {
            _ = try await connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.GattManager1",
                                          member: "RegisterApplication",
                                          arguments: [.objectPath(application.root), .properties([:])], timeout: timeout)
        } catch {
            throw BlueZError(error, operation: op, path: adapter.rawValue)
        }
        state.withLock { $0.registered = true }
    }

    /// `org.bluez.GattManager1.UnregisterApplication(root)` (when registered), then removes
    /// the objects in reverse export order. Idempotent; returns the unregistration error, if
    /// any (the objects are removed regardless).
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        let wasRegistered = state.withLock { s -> Bool in
            defer { s.registered = false }
            return s.registered
        }
        var failure: BlueZError?
        if wasRegistered {
            do {
                _ = try await connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.GattManager1",
                                              member: "UnregisterApplication",
                                              arguments: [.objectPath(application.root)], timeout: timeout)
            } catch {
                failure = BlueZError(error, operation: "org.bluez.GattManager1.UnregisterApplication", path: adapter.rawValue)
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
        for s in application.services {
            for c in s.characteristics {
                c.attribute.state.withLock { $0.export = nil }
                c.resetNotifying()
                for d in c.descriptors { d.attribute.state.withLock { $0.export = nil } }
            }
        }
    }
}
