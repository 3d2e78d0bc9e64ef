// Registration: objects exported for bluetoothd and registered with one of its managers (a GATT
// application, an advertisement, advertisement monitors, a pairing agent). One lifecycle for all:
// export → register → (bluetoothd restarts: revoke, register again) → unregister → unexport.

import DBus
import Locking

// MARK: - RegistrationCalls

/// What one kind of registration does: the objects it exports and the BlueZ calls that register
/// and unregister them. Everything else (the registered state, the allowed caller, following the
/// owner of `org.bluez`) is ``Registration``'s.
public struct RegistrationCalls: Sendable {
    /// Exports the objects on `registration.connection`, answering only `allowedCaller`; returns
    /// the handles in export order (a parent before its children). On failure it removes what it
    /// exported and throws.
    public typealias Export = @Sendable (_ registration: Registration, _ allowedCaller: String) throws(BlueZError) -> [ExportHandle]
    /// One call to bluetoothd, answered within `timeout`.
    public typealias Call = @Sendable (_ connection: Connection, _ timeout: Duration) async throws(BlueZError) -> Void

    /// The object path registered (the application's root, the advertisement, the agent): for logs.
    public var path: ObjectPath
    /// Exports the objects.
    public var export: Export
    /// Registers the exported objects, e.g. `org.bluez.GattManager1.RegisterApplication`.
    public var register: Call
    /// Runs after each successful ``register`` (e.g. `org.bluez.AgentManager1.RequestDefaultAgent`);
    /// its failure is thrown, the registration stays.
    public var afterRegister: Call?
    /// Unregisters, e.g. `org.bluez.GattManager1.UnregisterApplication`.
    public var unregister: Call
    /// Runs before each ``Registration/reregister(allowedCaller:timeout:)`` (e.g. resets notifying states).
    public var willReregister: (@Sendable () -> Void)?
    /// Runs after the objects were removed.
    public var didUnexport: (@Sendable () -> Void)?

    /// The calls of one kind of registration.
    public init(path: ObjectPath, export: @escaping Export, register: @escaping Call, afterRegister: Call? = nil,
                unregister: @escaping Call, willReregister: (@Sendable () -> Void)? = nil,
                didUnexport: (@Sendable () -> Void)? = nil) {
        self.path = path
        self.export = export
        self.register = register
        self.afterRegister = afterRegister
        self.unregister = unregister
        self.willReregister = willReregister
        self.didUnexport = didUnexport
    }

    /// Calls `interface.member(arguments)` on `path` at `org.bluez`.
    public static func bluez(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue]) -> Call {
        { connection, timeout throws(BlueZError) in
            _ = try await connection.bluezCall(path: path, interface: interface, member: member, arguments: arguments, timeout: timeout)
        }
    }
}

// MARK: - Registration

/// Objects exported on a connection and registered with bluetoothd, through ``RegistrationCalls``.
///
/// The objects answer only ``allowedCaller`` (the unique name of `org.bluez`'s owner).
/// ``followOwner(of:registeredWith:reregister:timeout:onChange:)`` keeps that right across
/// bluetoothd restarts: when the owner goes away or changes nobody may call the objects and the
/// registration is gone; a new owner gets them registered again. ``unregister(timeout:)`` calls
/// the unregister call (when registered), then removes the objects, last exported first;
/// releasing the registration removes them too (bluetoothd then drops what it held on its own).
public final class Registration: Sendable {
    /// The connection the objects are exported on and the calls go through.
    public let connection: Connection
    /// What this registration exports and calls.
    public let calls: RegistrationCalls

    private struct Follow {
        let observation: ObjectTreeObservation
        /// The owner last seen (nil: none).
        var owner: String?
        let reregister: Bool
        let timeout: Duration
        let onChange: (@Sendable (String?) -> Void)?
    }
    private struct State {
        var exports: [ExportHandle] = []
        var registered = false
        var released = false
        /// Bumped when the owner changes, on each reregistration and on unexport: a register call
        /// started before answers for a registration that is gone.
        var epoch = 0
        var follow: Follow?
        /// ``unregister(timeout:)`` ran: nothing is exported, registered or followed again.
        var ended = false
    }
    // Sendable through this lock; no call, D-Bus or callback, is made while holding it.
    private let state = Locked(State())

    /// A registration of nothing yet: ``export(allowedCaller:)`` then ``register(timeout:)``, or
    /// ``exportAndRegister(allowedCaller:timeout:)``.
    public init(connection: Connection, calls: RegistrationCalls) {
        self.connection = connection
        self.calls = calls
    }

    deinit {
        state.withLock { $0.follow?.observation }?.cancel()
        unexport()
    }

    // MARK: State

    /// Whether the register call succeeded and since then no unregistration, `Release()` or
    /// change of `org.bluez`'s owner happened.
    public var isRegistered: Bool { state.withLock { $0.registered } }

    /// Whether bluetoothd called `Release()` (``released()``) since the last registration.
    public var wasReleased: Bool { state.withLock { $0.released } }

    /// Whether the objects are exported.
    public var isExported: Bool { state.withLock { !$0.exports.isEmpty } }

    /// The unique name allowed to call the objects; "" allows no one; nil when nothing is exported.
    public var allowedCaller: String? {
        get { state.withLock { $0.exports.first }?.allowedCaller }
        set { for h in state.withLock({ $0.exports }) { h.allowedCaller = newValue } }
    }

    // MARK: Exporting

    /// Exports the objects (``RegistrationCalls/export``), answering only `allowedCaller`.
    public func export(allowedCaller: String) throws(BlueZError) {
        let refused = state.withLock { $0.ended || !$0.exports.isEmpty }
        guard !refused else {
            throw BlueZError(kind: .alreadyExists, message: "the objects are exported already, or were unregistered", path: calls.path.rawValue)
        }
        let handles = try calls.export(self, allowedCaller)
        let kept = state.withLock { s -> Bool in
            guard !s.ended, s.exports.isEmpty else { return false }
            s.exports = handles
            return true
        }
        guard kept else {
            for h in handles.reversed() { h.unexport() }
            throw BlueZError(kind: .alreadyExists, message: "the objects were exported, or unregistered, meanwhile", path: calls.path.rawValue)
        }
    }

    /// Removes the objects, last exported first, then runs ``RegistrationCalls/didUnexport``.
    /// Idempotent.
    public func unexport() {
        let exports = state.withLock { s -> [ExportHandle] in
            defer { s.exports = []; s.registered = false; s.epoch += 1 }
            return s.exports
        }
        guard !exports.isEmpty else { return }
        for h in exports.reversed() { h.unexport() }
        calls.didUnexport?()
    }

    // MARK: Registering

    /// ``export(allowedCaller:)``, then ``register(timeout:)``; on failure the registration is
    /// undone (``unregister(timeout:)``) and the error thrown.
    public func exportAndRegister(allowedCaller: String, timeout: Duration) async throws(BlueZError) {
        try export(allowedCaller: allowedCaller)
        do {
            try await register(timeout: timeout)
        } catch {
            await unregister()
            throw error
        }
    }

    /// The register call (``RegistrationCalls/register``) with the exported objects, then
    /// ``RegistrationCalls/afterRegister``. An answer that comes after an owner change or an
    /// unexport does not count: the registration it made is gone (after an unexport the
    /// unregister call is sent, and this throws).
    public func register(timeout: Duration) async throws(BlueZError) {
        guard let epoch = state.withLock({ $0.exports.isEmpty ? nil : $0.epoch }) else {
            throw BlueZError(kind: .doesNotExist, message: "the objects were unexported", path: calls.path.rawValue)
        }
        try await calls.register(connection, timeout)
        let outcome = state.withLock { s -> (current: Bool, exported: Bool) in
            guard s.epoch == epoch else { return (false, !s.exports.isEmpty) }
            s.registered = true
            s.released = false
            return (true, true)
        }
        guard outcome.exported else {
            try? await calls.unregister(connection, timeout)
            throw BlueZError(kind: .doesNotExist, message: "the objects were unexported while registering", path: calls.path.rawValue)
        }
        guard outcome.current else { return }
        try await calls.afterRegister?(connection, timeout)
    }

    /// Registers the exported objects again, now answering only `allowedCaller` (e.g. after
    /// bluetoothd restarted, or released them): ``RegistrationCalls/willReregister``, then
    /// ``register(timeout:)``.
    public func reregister(allowedCaller: String, timeout: Duration) async throws(BlueZError) {
        state.withLock { s in
            s.registered = false
            s.epoch += 1
        }
        self.allowedCaller = allowedCaller
        calls.willReregister?()
        try await register(timeout: timeout)
    }

    /// bluetoothd called the objects' `Release()`: it no longer holds the registration. Returns
    /// whether it held it until now (the first `Release()` since registering).
    public func released() -> Bool {
        state.withLock { s -> Bool in
            guard s.registered else { return false }
            s.registered = false
            s.released = true
            return true
        }
    }

    // MARK: Unregistering

    /// Stops following the owner, calls ``RegistrationCalls/unregister`` (when registered), then
    /// removes the objects (``unexport()``), whatever the call answered, timed out included.
    /// Idempotent; returns the unregistration error, if any.
    @discardableResult
    public func unregister(timeout: Duration = .seconds(5)) async -> BlueZError? {
        let (wasRegistered, observation) = state.withLock { s in
            defer { s.registered = false; s.ended = true; s.follow = nil }
            return (s.registered, s.follow?.observation)
        }
        observation?.cancel()
        var failure: BlueZError?
        if wasRegistered {
            do throws(BlueZError) { try await calls.unregister(connection, timeout) } catch { failure = error }
        }
        unexport()
        return failure
    }

    // MARK: Following the owner

    /// Follows the owner of `org.bluez` in `tree` from `owner`, the one the objects were
    /// registered with. Each change (also one that happened before this call): the registration
    /// is gone (``isRegistered`` false), nobody may call the objects (``allowedCaller`` ""), then
    /// `onChange` runs with the new owner (nil: none) on the tree's thread; with `reregister`, a
    /// new owner gets the objects registered again (``reregister(allowedCaller:timeout:)`` within
    /// `timeout`; a failure is logged). Replaces an earlier follow; ends with ``unregister(timeout:)``.
    public func followOwner(of tree: ObjectTree, registeredWith owner: String, reregister: Bool = true,
                            timeout: Duration = .seconds(10), onChange: (@Sendable (String?) -> Void)? = nil) {
        let observation = tree.observe { [weak self] event in
            if case .ownerChanged(let owner) = event { self?.ownerChanged(owner) }
        }
        let follow = Follow(observation: observation, owner: owner, reregister: reregister, timeout: timeout, onChange: onChange)
        let (kept, previous) = state.withLock { s -> (Bool, ObjectTreeObservation?) in
            guard !s.ended else { return (false, nil) }
            defer { s.follow = follow }
            return (true, s.follow?.observation)
        }
        previous?.cancel()
        guard kept else {
            observation.cancel()
            return
        }
        // Subscribed first, then checked: a change before the observer was in place counts too.
        let status = tree.status
        if status.ownerKnown { ownerChanged(status.owner) }
    }

    /// `org.bluez` has a new owner, or none (the tree's thread).
    private func ownerChanged(_ owner: String?) {
        let follow = state.withLock { s -> Follow? in
            guard let f = s.follow, f.owner != owner else { return nil }
            s.follow?.owner = owner
            s.registered = false
            s.epoch += 1
            return f
        }
        guard let follow else { return }
        allowedCaller = ""
        follow.onChange?(owner)
        guard let owner, follow.reregister else { return }
        Task { [weak self] in
            guard let self else { return }
            do throws(BlueZError) {
                try await self.reregister(allowedCaller: owner, timeout: follow.timeout)
            } catch {
                BlueZLog.debug("\(self.calls.path.rawValue): registering again with the new owner of org.bluez (\(owner)) failed: \(error)")
            }
        }
    }
}
