// Adapters: every local controller bluetoothd knows, their changes (hot-plug), and their settings.
import BlueZ
import DBus
import Foundation
import Futures
import Locking

/// The local Bluetooth adapters: a list, a stream of adapters added, removed and changed (a USB
/// dongle unplugged and plugged back), and futures to change their settings. Also scans on
/// several adapters at once (``startScanning(on:forServiceUUIDs:capacity:options:poweredOnTimeout:)``).
///
/// ```swift
/// let adapters = Adapters()          // on BluetoothSession.default, the system bus
/// for adapter in try await adapters.list().value { print(adapter) }
/// adapters.whenAdaptersChange().onSuccess { event in print(event) }
/// ```
///
/// Built on the session's object tree (`GetManagedObjects`, `InterfacesAdded`/
/// `InterfacesRemoved`, `PropertiesChanged` of `org.bluez.Adapter1`); futures complete on `context`.
public final class Adapters: Sendable {
    /// The session the list reads: its bus connection, object cache and clock.
    public let session: BluetoothSession
    /// Where callbacks run.
    public let context: any ExecutionContext
    /// Times the deadlines (``list(timeout:)``, the scans' power-on waits): the session's clock.
    public var clock: any TimerClock { session.clock }
    var connection: Connection? { session.connection }
    let tree: ObjectTree?
    var busError: String? { session.unavailableReason }

    private struct State {
        var known: [ObjectPath: Adapter] = [:]
        var streams: [Int: StreamPromise<AdapterEvent>] = [:]
        var nextStream = 0
        var observation: ObjectTreeObservation?
        var scan: MultiAdapterScan?
    }
    // Sendable through this lock; no user code and no D-Bus call runs while it is held.
    private let inner = Locked(State())

    /// The running multi-adapter scan (see Adapters+Scanning).
    var scan: MultiAdapterScan? {
        get { inner.withLock { $0.scan } }
        set { inner.withLock { $0.scan = newValue } }
    }

    /// Replaces the running multi-adapter scan; returns the previous one.
    func exchangeScan(_ new: MultiAdapterScan?) -> MultiAdapterScan? {
        inner.withLock { s in defer { s.scan = new }; return s.scan }
    }

    /// Clears the running scan if it is `scan`; returns whether it was.
    func clearScan(_ scan: MultiAdapterScan) -> Bool {
        inner.withLock { s in
            guard s.scan === scan else { return false }
            s.scan = nil
            return true
        }
    }

    /// The adapters of `session` (the process-wide ``BluetoothSession/default`` when not given);
    /// callbacks run on `context` (the session's context when nil).
    public init(session: BluetoothSession = .default, context: (any ExecutionContext)? = nil) {
        self.session = session
        self.context = context ?? session.context
        self.tree = session.isOpen ? session.tree : nil
        guard let tree else { return }
        defer { session.join(self) }
        let observation = tree.observe { [weak self] event in
            switch event {
            case .interfacesAdded, .interfacesRemoved, .ownerChanged, .loaded: self?.refresh()
            case .propertiesChanged(_, let interface, _, _) where interface == Adapter1.interface: self?.refresh()
            default: break
            }
        }
        inner.withLock {
            $0.observation = observation
            $0.known = Self.read(tree)
        }
    }

    deinit { end() }

    /// Stops observing the tree and finishes every ``whenAdaptersChange()`` stream.
    private func end() {
        let (observation, streams) = inner.withLock { s in
            defer { s.observation = nil; s.streams = [:] }
            return (s.observation, Array(s.streams.values))
        }
        observation?.cancel()
        for s in streams { s.finish() }
    }

    // MARK: - Listing

    /// The adapters the object tree holds now, by hci index (empty before the tree is loaded:
    /// use ``list(timeout:)`` to wait for it).
    public var all: [Adapter] { tree.map(Self.read)?.values.sorted(by: Self.order) ?? [] }

    /// The adapter named `name` (`hci0`) as the tree holds it now.
    public func adapter(named name: String) -> Adapter? { all.first { $0.name == name } }

    /// The adapters, once bluetoothd's objects are loaded and the tree caught up with the bus
    /// (`org.freedesktop.DBus.ObjectManager.GetManagedObjects` on `org.bluez`). Fails with
    /// ``BlueCapError`` of kind `.serviceUnavailable` when bluetoothd is not on the bus, or
    /// `.timeout` when the objects are not loaded within `timeout`.
    public func list(timeout: Duration = .seconds(10)) -> Future<[Adapter]> {
        let promise = Promise<[Adapter]>()
        guard let tree else {
            promise.failure(BlueCapError(.busUnavailable, Self.listOperation, adapter: nil, busError ?? "no D-Bus connection"))
            return promise.future
        }
        let token = ObservationBox()
        let deadline = clock.schedule(after: timeout) {
            promise.failure(BlueCapError(kind: .timeout, operation: Self.listOperation, timeout: timeout,
                                         message: "bluetoothd's objects were not loaded within \(timeout)"))
        }
        promise.future.onComplete(context: .immediate) { _ in
            deadline.cancel()
            token.cancel()
        }
        let check: @Sendable () -> Void = { [tree] in
            let status = tree.status
            if status.loaded {
                promise.success(Self.read(tree).values.sorted(by: Self.order))
            } else if status.ownerKnown, status.owner == nil {
                promise.failure(BlueCapError(.serviceUnavailable, Self.listOperation, adapter: nil,
                                                "bluetoothd (org.bluez) is not on the bus: start it (systemctl start bluetooth)"))
            } else if let error = status.loadError {
                promise.failure(BlueCapError(error, Self.listOperation, adapter: nil))
            }
        }
        token.set(tree.observe { event in
            switch event {
            case .loaded, .loadFailed, .ownerChanged: check()
            default: break
            }
        })
        tree.synchronize(check)
        return promise.future
    }

    // MARK: - Changes

    /// A new stream of adapter events from now on: `.added` when an adapter appears (plugged in,
    /// or a restarted bluetoothd publishes it), `.removed` when it goes, `.changed` with the new
    /// snapshot when one of its `Adapter1` properties changes. Nothing is replayed: read
    /// ``all`` or ``list(timeout:)`` for the adapters already there. When more than `capacity`
    /// events are waiting for a slow subscriber, the oldest are dropped (the stream's bounded
    /// buffer). The stream finishes when this object is released.
    public func whenAdaptersChange(capacity: Int = 32) -> FutureStream<AdapterEvent> {
        let promise = StreamPromise<AdapterEvent>(capacity: max(1, capacity))
        inner.withLock { s in
            s.nextStream += 1
            s.streams[s.nextStream] = promise
        }
        return promise.stream
    }

    /// Recomputes the adapters from the tree and reports the differences (owner thread).
    private func refresh() {
        guard let tree else { return }
        let now = Self.read(tree)
        let (events, streams) = inner.withLock { s -> ([AdapterEvent], [StreamPromise<AdapterEvent>]) in
            var events: [AdapterEvent] = []
            for (path, old) in s.known.sorted(by: { Self.order($0.value, $1.value) }) where now[path] == nil {
                events.append(.removed(old))
            }
            for adapter in now.values.sorted(by: Self.order) {
                guard let path = try? ObjectPath(adapter.path) else { continue }
                if let old = s.known[path] {
                    if old != adapter { events.append(.changed(adapter)) }
                } else {
                    events.append(.added(adapter))
                }
            }
            s.known = now
            return (events, Array(s.streams.values))
        }
        for e in events {
            BlueZLog.debug("adapters: \(e)")
            for s in streams { s.success(e) }
        }
    }

    static let listOperation = "Adapters.list (org.freedesktop.DBus.ObjectManager.GetManagedObjects)"

    static func read(_ tree: ObjectTree) -> [ObjectPath: Adapter] {
        var result: [ObjectPath: Adapter] = [:]
        for path in tree.paths(withInterface: Adapter1.interface) {
            if let a = Adapter(path: path, interfaces: tree.interfaces(at: path) ?? [:]) { result[path] = a }
        }
        return result
    }

    static func order(_ a: Adapter, _ b: Adapter) -> Bool {
        let ia = (try? ObjectPath(a.path)).flatMap(Adapter1.index(of:)) ?? Int.max
        let ib = (try? ObjectPath(b.path)).flatMap(Adapter1.index(of:)) ?? Int.max
        return (ia, a.name) < (ib, b.name)
    }

    // MARK: - Settings

    /// Powers the adapter on or off (sets `org.bluez.Adapter1.Powered`).
    public func setPowered(_ on: Bool, adapter name: String, timeout: Duration = .seconds(10)) -> Future<Void> {
        set("Powered", adapter: name) { a, done in a.setPowered(on, timeout: timeout, completion: done) }
    }

    /// Sets the name remote devices see (`org.bluez.Adapter1.Alias`; "" restores the system name).
    public func setAlias(_ alias: String, adapter name: String, timeout: Duration = .seconds(5)) -> Future<Void> {
        set("Alias", adapter: name) { a, done in a.setAlias(alias, timeout: timeout, completion: done) }
    }

    /// Makes the adapter discoverable or not (`org.bluez.Adapter1.Discoverable`); with
    /// `discoverableFor` (seconds, 0: until switched off) `DiscoverableTimeout` is set first.
    public func setDiscoverable(_ on: Bool, discoverableFor: UInt32? = nil, adapter name: String,
                                timeout: Duration = .seconds(5)) -> Future<Void> {
        set("Discoverable", adapter: name) { a, done in
            guard let seconds = discoverableFor else { return a.setDiscoverable(on, timeout: timeout, completion: done) }
            a.setDiscoverableTimeout(seconds, timeout: timeout) { result in
                if case .failure = result { return done(result) }
                a.setDiscoverable(on, timeout: timeout, completion: done)
            }
        }
    }

    /// Accepts pairing requests or not (`org.bluez.Adapter1.Pairable`).
    public func setPairable(_ on: Bool, adapter name: String, timeout: Duration = .seconds(5)) -> Future<Void> {
        set("Pairable", adapter: name) { a, done in a.setPairable(on, timeout: timeout, completion: done) }
    }

    private func set(_ property: String, adapter name: String,
                     _ body: (Adapter1, @escaping @Sendable (Result<Void, BlueZError>) -> Void) -> Void) -> Future<Void> {
        let promise = Promise<Void>()
        let operation = "Adapters.set\(property) (org.bluez.Adapter1.\(property))"
        guard let connection else {
            promise.failure(BlueCapError(.busUnavailable, operation, adapter: name, busError ?? "no D-Bus connection"))
            return promise.future
        }
        guard let path = try? ObjectPath("/org/bluez/\(name)") else {
            promise.failure(BlueCapError(.doesNotExist, operation, adapter: nil, "\"\(name)\" is not an adapter name (hciN)"))
            return promise.future
        }
        body(Adapter1(connection: connection, path: path)) { result in
            switch result {
            case .success: promise.success(())
            case .failure(let e) where e.kind == .unknownObject || e.kind == .doesNotExist:
                promise.failure(BlueCapError(.doesNotExist, operation, adapter: name, "bluetoothd has no adapter \(name)", bluez: e))
            case .failure(let e):
                promise.failure(BlueCapError(e, operation, adapter: name))
            }
        }
        return promise.future
    }
}

// MARK: - Session

extension Adapters: SessionMember {
    /// Stops the multi-adapter scan and finishes the adapter streams.
    func sessionClosing(timeout: Duration) -> Future<Void> {
        stopScanning()
        end()
        return Future(value: ())
    }
}
