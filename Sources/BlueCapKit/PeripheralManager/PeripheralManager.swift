// PeripheralManager: the peripheral role. This Linux box serves GATT services and advertises.

import BlueZ
import DBus
import Foundation
import Futures
import Synchronization
import Locking

/// The peripheral role over BlueZ: services registered with `org.bluez.GattManager1`,
/// advertisements with `org.bluez.LEAdvertisingManager1`, on one adapter.
///
/// Exported objects answer only the current owner of `org.bluez`. When bluetoothd restarts
/// (a new owner), the state goes `.resetting` then `.poweredOn`, and the services and the
/// advertisement are registered again automatically.
public final class PeripheralManager: Sendable {
    /// The session the manager runs on: its bus connection, object cache and clock.
    public let session: BluetoothSession
    /// The bus connection (nil when the bus could not be reached: the state is `.unsupported`).
    var connection: Connection? { session.connection }
    /// The adapter asked for (`"hci0"`), nil for the first powered one.
    public let adapterName: String?
    let context: any ExecutionContext
    /// What times the request timeouts of the characteristics added: the session's clock.
    public var clock: any TimerClock { session.clock }
    let tracker: AdapterStateTracker?
    /// The latest state, replayed to a new subscriber (as ``CentralManager``'s).
    let stateStream = StreamPromise<ManagerState>(capacity: 1)
    /// The adapter in use after each change (see PeripheralManager+State).
    let adapterStream = StreamPromise<String?>(capacity: 1)
    let ready = Promise<Void>()
    let advertisingStream = StreamPromise<Bool>(capacity: 10)
    /// The ObjectManager root of the exported application (passed to `RegisterApplication`);
    /// services are exported at `<root>/serviceN`.
    let applicationRoot: ObjectPath
    /// The `LEAdvertisement1` object's path (passed to `RegisterAdvertisement`).
    let advertisementObject: ObjectPath

    /// The object path of the exported GATT application's root (passed to
    /// `org.bluez.GattManager1.RegisterApplication`; services are at `<root>/serviceN`), for logs.
    public var applicationPath: String { applicationRoot.rawValue }
    /// The object path of the exported `org.bluez.LEAdvertisement1` (passed to
    /// `RegisterAdvertisement`), for logs.
    public var advertisementPath: String { advertisementObject.rawValue }

    struct State {
        var state: ManagerState = .unknown
        var adapter: ObjectPath?
        var services: [MutableService] = []
        var application: GattApplicationHandle?
        var wantedAdvertisement: LocalAdvertisement?
        var advertisement: AdvertisementHandle?
        /// The advertisements added with `addAdvertisement`, not stopped.
        var instances: [AdvertisingInstance] = []
        var instanceCounter = 0
        var tail: Task<Void, Never>?
        var observation: ObjectTreeObservation?
    }
    // Sendable through this lock; no call or callback runs while holding it.
    let inner = Locked(State())

    private static let counter = Atomic<Int>(0)

    /// A manager on `adapter` (e.g. `"hci1"`; nil: the first powered adapter) in `session` (the
    /// process-wide ``BluetoothSession/default`` when not given). Futures complete on `context`
    /// (the session's when nil); the session's clock times the request timeouts of the
    /// characteristics added (``MutableCharacteristic/requestTimeout``).
    public init(adapter: String? = nil, session: BluetoothSession = .default, context: (any ExecutionContext)? = nil) {
        adapterName = adapter
        self.session = session
        self.context = context ?? session.context
        let n = Self.counter.add(1, ordering: .relaxed).newValue
        applicationRoot = try! ObjectPath("/org/bluecap/peripheral\(getpid())_\(n)")
        advertisementObject = try! ObjectPath("/org/bluecap/advertisement\(getpid())_\(n)")
        guard let tree = session.tree, session.isOpen else {
            tracker = nil
            setState(.unsupported, adapter: nil)
            return
        }
        let tracker = AdapterStateTracker(tree: tree, adapterName: adapter)
        self.tracker = tracker
        let observation = tracker.observe { [weak self] snapshot in self?.adapterChanged(snapshot) }
        inner.withLock { $0.observation = observation }
        tracker.start()
        session.join(self)
    }

    deinit {
        inner.withLock { $0.observation }?.cancel()
        tracker?.stop()
    }

    // MARK: State

    /// The current state.
    public var state: ManagerState { inner.withLock { $0.state } }

    /// The adapter in use (`/org/bluez/hci1`), when there is one.
    public var adapterPath: String? { inner.withLock { $0.adapter?.rawValue } }

    /// The state, then each change: `.unknown` until the bus answered, then `.poweredOn`,
    /// `.poweredOff`, `.resetting` (bluetoothd restarting), `.unsupported`, `.unauthorized`.
    /// The stream keeps the latest state: a new subscriber gets it first (as
    /// ``CentralManager/whenStateChanges()``), so `withFilter { $0 == .poweredOn }` never
    /// completes from a state that is over. ``whenPoweredOn(timeout:)`` says it in one call.
    public func whenStateChanges() -> FutureStream<ManagerState> { stateStream.stream }

    private func setState(_ new: ManagerState, adapter: ObjectPath?) {
        let (changed, moved) = inner.withLock { s -> (Bool, Bool) in
            let moved = s.adapter != adapter
            s.adapter = adapter
            guard s.state != new else { return (false, moved) }
            s.state = new
            return (true, moved)
        }
        if moved { adapterStream.success(adapter.map(Adapter1.name(of:))) }
        if changed { stateStream.success(new) }
        if new != .unknown { ready.success(()) }
    }

    /// The tracker's snapshot changed (connection thread). A powered adapter gets what is wanted
    /// registered again (``restore()``); the registrations themselves follow the owner of
    /// `org.bluez` (``follow(_:owner:advertisement:)``).
    private func adapterChanged(_ snapshot: AdapterStateTracker.Snapshot) {
        setState(snapshot.state, adapter: snapshot.adapter)
        if snapshot.state == .poweredOn {
            _ = enqueue("restore", call: "org.bluez.GattManager1.RegisterApplication") { [weak self] in try await self?.restore() }
        }
    }

    /// The hook of the registrations' owner following (`Registration.followOwner`,
    /// tree thread): bluetoothd went away or was replaced, so its subscriptions are gone and
    /// (for the advertisement) advertising stopped. The registration itself already refuses
    /// every caller until ``restore()`` registers it with the new owner.
    private func ownerChanged(advertisement: Bool) {
        if advertisement {
            advertisingStream.success(false)
        } else {
            for s in services { for c in s.characteristics { c.local.resetNotifying() } }
        }
    }

    /// Follows the owner of `org.bluez` from `owner`, without registering again on its own:
    /// ``restore()`` does, once the adapter is powered.
    func follow(_ registration: Registration, owner: String, advertisement: Bool) {
        guard let tree = tracker?.tree else { return }
        registration.followOwner(of: tree, registeredWith: owner, reregister: false) { [weak self] _ in
            self?.ownerChanged(advertisement: advertisement)
        }
    }

    // MARK: Operations

    /// Runs `body` after every earlier operation (and after the first state is known). A
    /// failure becomes a ``BlueCapError`` named `"PeripheralManager.<name> (<BlueZ call>)"`:
    /// the BlueZ call that failed, else `call`.
    func enqueue(_ name: String, call: String, _ body: @escaping @Sendable () async throws -> Void) -> Future<Void> {
        let promise = Promise<Void>()
        let ready = self.ready.future
        let context = self.context
        let fallbackPath = applicationRoot.rawValue
        inner.withLock { s in
            let previous = s.tail
            s.tail = Task { [weak self] in
                await previous?.value
                _ = try? await ready.value
                let result: Result<Void, any Error>
                do {
                    try await body()
                    result = .success(())
                } catch let error as BlueCapError {
                    result = .failure(error)
                } catch let error as BlueZError {
                    let path = error.path ?? self?.adapterPath ?? fallbackPath
                    result = .failure(BlueCapError(error, operation: "PeripheralManager.\(name) (\(error.operation ?? call))", path: path))
                } catch {
                    result = .failure(BlueCapError(kind: .failed, operation: "PeripheralManager.\(name) (\(call))",
                                                   path: fallbackPath, message: "\(error)"))
                }
                context.execute { promise.complete(result) }
            }
        }
        return promise.future
    }

    /// The owner and adapter to register with; throws unless powered on.
    func target(_ operation: String) throws(BlueCapError) -> (owner: String, adapter: ObjectPath, connection: Connection) {
        let (state, adapter) = inner.withLock { ($0.state, $0.adapter) }
        guard let connection, let owner = tracker?.tree.status.owner, let adapter, state == .poweredOn else {
            let poweredOff = state == .poweredOff
            throw BlueCapError(kind: poweredOff ? .notPoweredOn : .serviceUnavailable, operation: operation,
                               path: adapter?.rawValue,
                               message: poweredOff ? "the adapter is powered off: power it with `bluetoothctl power on`"
                                   : "the adapter is \(state): is bluetoothd running (`systemctl status bluetooth`)?")
        }
        return (owner, adapter, connection)
    }

    /// After (re)gaining a powered adapter: registers what is wanted but not registered with the
    /// current owner (on another adapter, anew).
    private func restore() async throws {
        guard let (owner, adapter, _) = try? target("PeripheralManager.restore") else { return }
        let (app, ad, wanted) = inner.withLock { ($0.application, $0.advertisement, $0.wantedAdvertisement) }
        if let app, app.allowedCaller != owner || !app.isRegistered {
            if app.adapter == adapter {
                try await app.reregister(allowedCaller: owner)
            } else {
                await app.unregister()
                inner.withLock { $0.application = nil }
                try await registerApplication()
            }
        }
        guard let ad, wanted != nil else { return }
        if ad.allowedCaller != owner {
            if ad.adapter == adapter {
                try await ad.reregister(allowedCaller: owner)
                advertisingStream.success(true)
            } else {
                try await registerAdvertisement()
            }
        } else if !ad.isRegistered, !ad.wasReleased {
            try await ad.reregister(allowedCaller: owner)
            advertisingStream.success(true)
        }
    }

    // MARK: Services

    /// The services added, in order.
    public var services: [MutableService] { inner.withLock { $0.services } }

    /// Adds `service`: the application is (re)registered with
    /// `org.bluez.GattManager1.RegisterApplication` with every service added so far. Fails
    /// (and the service is not kept) when registration fails or the adapter is not powered on;
    /// the error's operation is `PeripheralManager.add (org.bluez.GattManager1.RegisterApplication)`.
    @discardableResult
    public func add(_ service: MutableService) -> Future<Void> {
        let operation = "PeripheralManager.add (org.bluez.GattManager1.RegisterApplication)"
        let root = applicationRoot.rawValue
        return enqueue("add", call: "org.bluez.GattManager1.RegisterApplication") { [weak self] in
            guard let self else { return }
            let before = self.services
            guard !before.contains(where: { $0 === service }) else {
                throw BlueCapError(kind: .alreadyExists, operation: operation, path: root,
                                   message: "\(service) was already added: add a service once, or remove it first")
            }
            for c in service.characteristics { c.local.clock = self.clock }
            inner.withLock { $0.services.append(service) }
            do { try await registerApplication() } catch {
                inner.withLock { $0.services = before }
                try? await registerApplication()
                throw error
            }
        }
    }

    /// Removes `service` and registers the application again without it
    /// (`org.bluez.GattManager1.UnregisterApplication`, then `RegisterApplication` if services remain).
    @discardableResult
    public func remove(_ service: MutableService) -> Future<Void> {
        let root = applicationRoot.rawValue
        return enqueue("remove", call: "org.bluez.GattManager1.UnregisterApplication") { [weak self] in
            guard let self else { return }
            guard inner.withLock({ s in s.services.contains { $0 === service } }) else {
                throw BlueCapError(kind: .doesNotExist, operation: "PeripheralManager.remove (org.bluez.GattManager1.UnregisterApplication)",
                                   path: root, message: "\(service) was not added to this manager")
            }
            inner.withLock { $0.services.removeAll { $0 === service } }
            try await registerApplication()
        }
    }

    /// Removes every service (`org.bluez.GattManager1.UnregisterApplication`, objects unexported).
    @discardableResult
    public func removeAllServices() -> Future<Void> {
        enqueue("removeAllServices", call: "org.bluez.GattManager1.UnregisterApplication") { [weak self] in
            guard let self else { return }
            inner.withLock { $0.services.removeAll() }
            try await registerApplication()
        }
    }

    /// Unregisters the current application (if any) and registers one with the current services.
    func registerApplication() async throws {
        let old = inner.withLock { s in defer { s.application = nil }; return s.application }
        if let old { await old.unregister() }
        let services = self.services
        guard !services.isEmpty else { return }
        let (owner, adapter, connection) = try target("PeripheralManager.add (org.bluez.GattManager1.RegisterApplication)")
        let app = GattApplication(root: applicationRoot, services: services.map(\.local))
        let handle = try await app.register(on: connection, adapter: adapter, allowedCaller: owner)
        inner.withLock { $0.application = handle }
        follow(handle.registration, owner: owner, advertisement: false)
    }

    /// Stops advertising (the advertisement and every ``AdvertisingInstance``) and removes every
    /// service (in that order), for a clean exit:
    /// `org.bluez.LEAdvertisingManager1.UnregisterAdvertisement`, then
    /// `org.bluez.GattManager1.UnregisterApplication`, each with a 5 s timeout. Starts at once
    /// (not after queued operations); the future never fails (a bluetoothd already gone is fine).
    @discardableResult
    public func shutdown() -> Future<Void> {
        let ad = inner.withLock { s in defer { s.advertisement = nil; s.wantedAdvertisement = nil }; return s.advertisement }
        let app = inner.withLock { s in defer { s.application = nil; s.services = [] }; return s.application }
        let instances = inner.withLock { s in defer { s.instances = [] }; return s.instances }
        let stream = advertisingStream
        let promise = Promise<Void>()
        let context = self.context
        Task {
            if let ad {
                await ad.unregister()
                stream.success(false)
            }
            for instance in instances { await instance.handle.unregister() }
            await app?.unregister()
            context.execute { promise.success(()) }
        }
        return promise.future
    }
}

// MARK: - Session

extension PeripheralManager: SessionMember {
    /// ``shutdown()`` (advertisement and application unregistered), then `.unsupported`.
    func sessionClosing(timeout: Duration) -> Future<Void> {
        tracker?.stop()
        inner.withLock { $0.observation }?.cancel()
        return shutdown().settled().map(context: .immediate) { [weak self] in self?.setState(.unsupported, adapter: nil) }
    }
}
