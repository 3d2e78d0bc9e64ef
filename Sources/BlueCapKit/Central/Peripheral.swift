// Peripheral: a remote device seen by a CentralManager.
import BlueZ
import DBus
import Dispatch
import Foundation
import Futures
import Locking

/// A remote BLE peripheral: an `org.bluez.Device1` object under the manager's adapter.
///
/// State properties (``isConnected``, ``servicesResolved``, ``pairingState``, ``services``, and
/// the states of the services' characteristics and descriptors) read what is true now: the
/// latest `Device1` values BlueZ reported while it has the device's object and the peripheral is
/// not terminated; none (false, empty, nil) once the object is gone or after ``terminate()``
/// or ``forget()`` (``isTerminated`` says which). Records (``identifier``, ``address``,
/// ``name``, ``alias``, ``advertisement``, ``rssi``, the last values read) keep what was last seen.
/// Operations return futures completed on the manager's execution context; each is also
/// awaitable (`try await peripheral.discoverServices().value`).
public final class Peripheral: Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier: the device's object path (`/org/bluez/hci0/dev_C0_FF_EE_00_00_01`),
    /// the same for the same adapter and address across scans and bluetoothd restarts.
    public let identifier: String
    /// The device's address as BlueZ states it now (`Device1.Address`). For a peer that uses
    /// privacy this is the resolvable private address it was found at until it bonds, then its
    /// identity address (bluetoothd replaces it when the peer hands its identity over during
    /// pairing), the address to store and to reconnect by (``CentralManager/connect(address:addressType:timeout:)``,
    /// ``CentralManager/retrievePeripherals(withAddresses:)``). A record: the last one stated is kept
    /// after the device object goes.
    public var address: String { state.withLock { $0.properties.address } ?? discoveredAddress }
    /// `Device1.AddressType`: `.random` for a private or static random address, `.public` for a
    /// public one (a bonded privacy peer's identity address is usually public). A record.
    public var addressType: PeripheralAddressType? {
        state.withLock { $0.properties.addressType }.flatMap(PeripheralAddressType.init(rawValue:))
    }
    /// The address BlueZ first found the device at: the one its object path (``identifier``)
    /// carries. It differs from ``address`` once a peer that uses privacy has bonded (the path
    /// keeps the private address of the advertisement that made the object).
    public let discoveredAddress: String
    let path: ObjectPath
    /// The manager's session (its pairing-agent records, see ``pair(timeout:)``).
    let session: BluetoothSession
    let connection: Connection
    let tree: ObjectTree
    let context: any ExecutionContext
    /// The manager's clock: every timer of the peripheral runs on it (see ``after(_:_:)``).
    let clock: any TimerClock
    let operations: GattOperationQueue
    /// Removes the peripheral from its manager (set by the manager; called through `forget(_:)`).
    let unlist: @Sendable (Peripheral) -> Void
    /// Starts (true) or ends (false) the manager's search for the device while a connection
    /// attempt waits for its object (set by the manager).
    let deviceSearch: @Sendable (Peripheral, Bool) -> Void

    struct Waiter {
        let check: @Sendable () -> Bool
        let fail: @Sendable (PeripheralError) -> Void
        /// The deadline timer, cancelled as soon as the waiter is removed: it holds `onTimeout`
        /// and with it the operation's promise.
        var deadline: ScheduledTask?
    }

    struct State {
        var properties: Device1.Properties
        var lastRSSI: Int16?
        /// The connection's state: fed events under this lock, its actions run outside it.
        var connection = ConnectionStateMachine()
        /// The stream of the latest `connect(...)`.
        var connectPromise: StreamPromise<ConnectionUpdate>?
        /// The timer of the connection attempt in progress, cancelled once the attempt ends.
        var attemptTimer: (attempt: Int, task: ScheduledTask)?
        /// A connection slot of the session's ``ConnectionSlots`` is held or asked for: from the
        /// first `Connect` of an attempt until the link is down or the attempt ended.
        var slotHeld = false
        /// The slots count the link as up (the state machine is connected): see
        /// ``ConnectionSlots/linkIsUp(_:_:)``.
        var slotLinked = false
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var services: [ObjectPath: Service] = [:]
        var characteristics: [ObjectPath: Characteristic] = [:]
        /// The tree routes of the characteristics' `Value` changes (``ObjectTree/observeValue(at:_:)``).
        var valueRoutes: [ObjectPath: ObjectTreeObservation] = [:]
        var descriptors: [ObjectPath: Descriptor] = [:]
        var rssiUpdates: StreamPromise<Int16>?
        /// ``whenPairingChanges()``'s stream, made on first use.
        var pairingUpdates: StreamPromise<PairingState>?
        var observation: ObjectTreeObservation?
        /// ``whenServicesChange(capacity:)``'s stream, made on first use.
        var servicesUpdates: StreamPromise<ServicesChange>?
        /// The service objects (path → UUID) of the link since its services resolved; nil while
        /// unresolved or down (see Peripheral+ServiceChanges).
        var serviceSnapshot: [ObjectPath: BLEUUID]?
        /// `ServicesResolved` went false with the link up: BlueZ is resolving again.
        var resolvingAgain = false
        /// A comparison with ``serviceSnapshot`` waits for the burst to settle.
        var serviceDiffScheduled = false
        /// The GATT objects bluetoothd listed since the services resolved (Peripheral+GattInventory).
        var gattInventory = GattInventory.unknown
        /// The inventory queries asked so far (a reply counts only for the latest).
        var gattInventoryQueries = 0
        /// Our `Device1.Disconnect` took the link down and BlueZ's `Connected = false` is still
        /// to come (bluetoothd sends it after the reply): the link is ours until then.
        var awaitingLinkDownSignal = false

        /// `Device1.Connected`, or our `Connect` succeeded and no drop was seen since: real
        /// bluetoothd answers `Connect` before it emits `Connected = true`.
        /// Ours, or BlueZ's `Connected` while no Disconnect of ours is on its way (see
        /// ``ConnectionStateMachine/disconnectsInFlight``).
        var linkIsUp: Bool { isLive && (connection.isConnected || (properties.connected == true && connection.deviceConnectedIsCurrent)) }
        var terminated: Bool { connection.isTerminated }
        /// The link is up (``linkIsUp``) and bluetoothd is still discovering its services
        /// (`ServicesResolved` not true): ``Peripheral/pair(timeout:)`` waits for the end.
        var resolvingOnLink: Bool { linkIsUp && properties.servicesResolved != true }
        /// Whether BlueZ has the device's object: false from its `InterfacesRemoved` (removed,
        /// bluetoothd gone, adapter gone) until it is published again.
        var objectPresent = true
        /// The connection attempt waiting for the device object to come back (see
        /// ``ConnectionStateMachine/Action/awaitDevice(attempt:)``): a search for the device runs.
        var awaitingDevice: Int?
        /// Counts the attempts' `Device1.Connect` calls: an answer to any but the latest is stale
        /// (bluetoothd drops a Connect unanswered when it removes the device object).
        var connectCall = 0
        /// Whether the device's state is followed: its object exists and the peripheral is not
        /// terminated. The one rule every public state property follows: while not live, the
        /// state reads as none (no link, no bond, no services, not notifying), because that is
        /// what is true of a device BlueZ no longer has or that we no longer follow; records
        /// (identity, name, advertisement, last RSSI, last values) keep what was last seen.
        var isLive: Bool { objectPresent && !terminated }
        /// The `Device1` state as true now: ``properties`` while ``isLive``, else with the link
        /// and bond flags (`Connected`, `ServicesResolved`, `Paired`, `Bonded`, `Trusted`,
        /// `Blocked`) off.
        var current: Device1.Properties {
            guard !isLive else { return properties }
            var now = properties
            now.connected = false
            now.servicesResolved = false
            now.paired = false
            now.bonded = false
            now.trusted = false
            now.blocked = false
            return now
        }
    }

    let state: Locked<State>

    init(path: ObjectPath, session: BluetoothSession, connection: Connection, tree: ObjectTree, context: any ExecutionContext,
         deviceSearch: @escaping @Sendable (Peripheral, Bool) -> Void = { _, _ in },
         forget: @escaping @Sendable (Peripheral) -> Void) {
        let clock = session.clock
        self.path = path
        self.session = session
        self.identifier = path.rawValue
        self.connection = connection
        self.tree = tree
        self.context = context
        self.clock = clock
        self.operations = GattOperationQueue(clock: clock)
        self.unlist = forget
        self.deviceSearch = deviceSearch
        let props = Device1.Properties(tree.properties(at: path, interface: Device1.interface) ?? [:], path: path)
        self.discoveredAddress = Peripheral.address(from: path)
        var initial = State(properties: props, lastRSSI: props.rssi)
        initial.objectPresent = tree.properties(at: path, interface: Device1.interface) != nil
        state = Locked(initial)
        // A GATT call answered "Not connected" ends the connection at once (ConnectionStateMachine's
        // `gattLinkGone`), not when `Device1.Connected` turns false seconds later.
        operations.whenLinkGone { [weak self] error in
            BlueZLog.debug("\(path.rawValue): \(error): the link is gone")
            self?.feed(.gattLinkGone)
        }
    }

    /// Starts following the device's objects (called once by the manager).
    func startObserving() {
        let observation = tree.observe(subtree: path) { [weak self] event in self?.handle(event) }
        state.withLock { $0.observation = observation }
        // Events between the manager's read and the registration are caught up here.
        refreshProperties()
        if state.withLock({ $0.properties.connected == true && $0.properties.servicesResolved == true }) {
            servicesResolvedChanged(true)
        }
    }

    /// Removes `peripheral` (self) from its manager's list.
    func forget(_ peripheral: Peripheral) { unlist(peripheral) }

    /// The adapter's path from the device path: `/org/bluez/hci0` for `/org/bluez/hci0/dev_…`.
    var adapterPath: ObjectPath {
        let parent = path.rawValue.split(separator: "/").dropLast().joined(separator: "/")
        return (try? ObjectPath("/" + parent)) ?? path
    }

    static func address(from path: ObjectPath) -> String {
        let last = path.rawValue.split(separator: "/").last ?? ""
        return last.hasPrefix("dev_") ? last.dropFirst(4).replacingOccurrences(of: "_", with: ":") : String(last)
    }

    // MARK: - Device properties

    /// The advertised or GAP name (`Device1.Name`), nil when the device has none. A record: kept
    /// after the device object goes away.
    public var name: String? { state.withLock { $0.properties.name } }
    /// `Device1.Alias`: the name, or a user-set alias, or the address with dashes (a record, kept).
    public var alias: String? { state.withLock { $0.properties.alias } }
    /// The last RSSI in dBm (`Device1.RSSI`; BlueZ only reports it while discovering, the last
    /// value is kept).
    public var rssi: Int16? { state.withLock { $0.lastRSSI } }
    /// The advertising data (`Device1` Name, UUIDs, ManufacturerData, ServiceData, TxPower): a
    /// record, the last advertisement seen, kept after the device object goes away.
    public var advertisement: Advertisement { state.withLock { Advertisement($0.properties) } }
    /// `Device1.Connected`, or true from the successful `Device1.Connect` reply on (bluetoothd
    /// replies before its `Connected` PropertiesChanged signal, which it emits from an idle handler).
    /// False from the moment a `Device1.Disconnect` of ours is on its way (``disconnect()``, or a
    /// cancelled attempt) until BlueZ has answered it: the link it would report is going down.
    /// False once the device object is gone and after ``terminate()``.
    public var isConnected: Bool { state.withLock { $0.linkIsUp && !$0.terminated } }
    /// Whether ``terminate()`` (or ``forget()``) ended the peripheral: its manager no longer
    /// lists it, its operations fail with `.terminated`.
    public var isTerminated: Bool { state.withLock { $0.terminated } }
    /// `Device1.ServicesResolved`; false once the device object is gone and after ``terminate()``.
    public var servicesResolved: Bool { state.withLock { $0.current.servicesResolved ?? false } }
    /// Whether the peripheral's state is followed (see ``Peripheral``): BlueZ has its object and
    /// it is not terminated.
    var isLive: Bool { state.withLock { $0.isLive } }
    /// The latest `Device1` snapshot.
    package var deviceProperties: Device1.Properties { state.withLock { $0.properties } }

    /// The RSSI from the `Device1.RSSI` property, as a future (fails when BlueZ has none: it only
    /// reports RSSI while discovering).
    public func readRSSI() -> Future<Int16> {
        if let rssi { return Future(value: rssi) }
        return Future(error: PeripheralError(kind: .notSupported, operation: "Peripheral.readRSSI (Device1.RSSI)",
                                             path: identifier, message: "BlueZ reports RSSI only while discovering"))
    }

    /// Each new `Device1.RSSI` value (PropertiesChanged), kept `capacity` deep.
    public func receiveRSSIUpdates(capacity: Int = 10) -> FutureStream<Int16> {
        state.withLock { s in
            if let p = s.rssiUpdates { return p.stream }
            let p = StreamPromise<Int16>(capacity: capacity)
            s.rssiUpdates = p
            return p.stream
        }
    }

    // MARK: - Events

    func refreshProperties() {
        guard let raw = tree.properties(at: path, interface: Device1.interface) else { return }
        let props = Device1.Properties(raw, path: path)
        state.withLock { s in
            s.properties = props
            s.objectPresent = true
            if let r = props.rssi { s.lastRSSI = r }
        }
    }

    /// Brings the cached `Device1` snapshot up to date after a PropertiesChanged: an RSSI-only
    /// change (a scan storm's every update) is applied as is, anything else re-reads the tree.
    func apply(changed: [String: DBusValue], invalidated: [String]) {
        if invalidated.isEmpty, changed.count == 1, let value = changed["RSSI"] {
            let rssi = try? Int16(dbusValue: value)
            state.withLock { s in
                s.properties.rssi = rssi
                if let rssi { s.lastRSSI = rssi }
            }
            return
        }
        refreshProperties()
    }

    /// A lone `Device1.RSSI` change, passed on by the manager (owner thread): the tree routes
    /// these to the manager instead of to ``handle(_:)``.
    func rssiChanged(_ rssi: Int16?) {
        let (updates, waiting) = state.withLock { s -> (StreamPromise<Int16>?, Bool) in
            s.properties.rssi = rssi
            if let rssi { s.lastRSSI = rssi }
            return (s.rssiUpdates, !s.waiters.isEmpty)
        }
        if let rssi { updates?.success(rssi) }
        if waiting { runWaiters() }
    }

    /// One event about the device or its GATT objects (owner thread).
    func handle(_ event: ObjectTreeEvent) {
        if case .interfacesRemoved(let p, _) = event, p != path { gattObjectRemoved(p) }
        switch event {
        case .propertiesChanged(let p, let interface, let changed, let invalidated) where p == path && interface == Device1.interface:
            apply(changed: changed, invalidated: invalidated)
            if let rssi = changed["RSSI"].flatMap({ try? Int16(dbusValue: $0) }) {
                state.withLock { $0.rssiUpdates }?.success(rssi)
            }
            if let resolved = changed["ServicesResolved"].flatMap({ try? Bool(dbusValue: $0) }) {
                servicesResolvedChanged(resolved)
            }
            if let connected = changed["Connected"].flatMap({ try? Bool(dbusValue: $0) }) {
                state.withLock { $0.awaitingLinkDownSignal = false }
                if !connected { linkEndedForServices() }
                connectedChanged(connected)
            }
            if changed.keys.contains(where: PairingState.propertyNames.contains) { pairingPropertiesChanged() }
        case .interfacesAdded(let p, let ifaces) where p == path && ifaces[Device1.interface] != nil:
            let before = pairingState
            refreshProperties()
            if pairingState != before { pairingPropertiesChanged() }
            deviceObjectBack()
        case .interfacesRemoved(let p, let names) where p == path && names.contains(Device1.interface):
            let before = pairingState
            state.withLock { $0.objectPresent = false; $0.properties.connected = false; $0.properties.servicesResolved = false; $0.awaitingLinkDownSignal = false }
            linkEndedForServices()
            deviceRemoved()
            if pairingState != before { pairingPropertiesChanged() }
        case .interfacesAdded(let p, let ifaces) where ifaces[GattService1.interface] != nil && p != path:
            serviceObjectsChanged()
        case .interfacesRemoved(let p, let names) where names.contains(GattService1.interface) && p != path:
            serviceObjectsChanged()
        case .propertiesChanged(let p, let interface, let changed, _) where interface == GattCharacteristic1.interface:
            if let value = changed["Value"].flatMap({ try? Data(dbusValue: $0) }),
               let c = state.withLock({ $0.characteristics[p] }) {
                c.received(value, via: .propertiesChanged)
            }
        default:
            break
        }
        runWaiters()
    }

    // MARK: - Waiting for the tree

    /// Subscribe-then-check-then-wait: `check` runs now and after every event of the device's
    /// subtree until it returns true (it completes its own promise); after `timeout`, `onTimeout` runs.
    /// The deadline timer is cancelled as soon as the waiter ends (check passed, or failed by
    /// ``failPending(_:message:)``), so nothing the operation captured outlives it.
    func wait(timeout: Duration, check: @escaping @Sendable () -> Bool, fail: @escaping @Sendable (PeripheralError) -> Void,
              onTimeout: @escaping @Sendable () -> Void) {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            s.waiters[s.nextWaiter] = Waiter(check: check, fail: fail)
            return s.nextWaiter
        }
        if check() { removeWaiter(id); return }
        let timer = after(timeout) { [weak self] in
            guard let self, self.removeWaiter(id) != nil else { return }
            onTimeout()
        }
        // The waiter may have ended meanwhile (an event on the owner thread): then no one else
        // will cancel the timer.
        let armed = state.withLock { s -> Bool in
            guard s.waiters[id] != nil else { return false }
            s.waiters[id]?.deadline = timer
            return true
        }
        if !armed { timer.cancel() }
    }

    /// Removes a waiter and cancels its deadline timer.
    @discardableResult
    private func removeWaiter(_ id: Int) -> Waiter? {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.deadline?.cancel()
        return waiter
    }

    /// Runs every waiter's check; those that pass end.
    func runWaiters() {
        let waiters = state.withLock { $0.waiters }
        guard !waiters.isEmpty else { return }
        for (id, w) in waiters where w.check() { removeWaiter(id) }
    }

    /// Fails every waiter and queued GATT operation.
    func failPending(_ kind: PeripheralError.Kind, message: String) {
        let waiters = state.withLock { s -> [Waiter] in
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.deadline?.cancel() }
        for w in waiters { w.fail(PeripheralError(kind: kind, operation: "Peripheral.discoverServices", path: identifier, message: message)) }
        operations.failAll { PeripheralError(kind: kind, operation: $0, path: self.identifier, message: message) }
    }

    // MARK: - Hashable

    public static func == (a: Peripheral, b: Peripheral) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "Peripheral(\(address)\(name.map { " \"\($0)\"" } ?? ""))" }
}
