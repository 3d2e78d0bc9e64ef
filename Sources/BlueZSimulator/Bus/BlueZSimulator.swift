// BlueZSimulator: a simulated bluetoothd owning `org.bluez` on a D-Bus bus.

import BlueCapKit
import DBus
import Dispatch
import Foundation
import Timing

// MARK: - BlueZSimulator

/// A simulated bluetoothd: owns `org.bluez` on a (private) bus and answers BlueZ's D-Bus API
/// (Adapter1, Device1, GATT, GattManager1, LEAdvertisingManager1, ObjectManager, Properties) as
/// bluetoothd does, so any BlueZ client works against it. Peripherals are spec'd in Swift
/// (`SimulatedPeripheral`) or JSON (`Scenario`); adapters see each other through a virtual radio.
/// L2CAP channels (`publishL2CAPChannel`, `openL2CAPChannel`) between sessions on its bus in this
/// process meet over Unix socket pairs.
/// Faults can be injected from Swift or over D-Bus (`org.bluecap.Simulator1` at
/// `/org/bluecap/simulator`).
///
/// `@unchecked Sendable`: all mutable state is confined to `queue`; public methods hop onto it.
public final class BlueZSimulator: @unchecked Sendable {
    /// The well-known name served.
    public static let busName = "org.bluez"
    /// The control object's path and interface.
    public static let controlPath = "/org/bluecap/simulator"
    /// The control interface.
    public static let controlInterface = "org.bluecap.Simulator1"

    /// The queue every model operation runs on.
    public let queue: DispatchQueue
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    let core: SimulatorCore
    /// The bus address.
    public let busAddress: String
    let adapterCount: Int
    var connection: Connection
    var tree: ExportedTree!
    var faults = FaultPlan()
    /// Responders held by the no-reply fault (bounded; released after `noReplyHold`).
    var held: [(responder: Responder, work: ClockTask)] = []
    /// Tasks waiting in ``waitForHeldCalls(atLeast:)``, with the count each waits for.
    let heldWaiters = CountWaiters()
    /// How long a never-answered call is held before it is dropped.
    public var noReplyHold: Duration = .seconds(30)
    var nameWatch: SignalSubscription?
    var appSignals: [String: SignalSubscription] = [:]
    var bridgeBox: SimulatorBridge!
    var stopped = false

    /// Connects to `busAddress`, publishes `adapters` adapters and takes `org.bluez`.
    /// Every delay of the simulation (connection and discovery delays, delayed and held replies,
    /// storms) is timed by `clock`: real time by default; a `ManualClock` shared with a
    /// `CentralManager` makes both sides' deadlines fall due only when a test advances it (the
    /// due work then runs on the simulator's queue, not the advancing thread).
    /// Throws when the bus is unreachable or the name is already owned.
    /// `profile` is the BlueZ release imitated (``BlueZProfile/bluez5_66`` by default): which
    /// interfaces, methods and properties are exported. `experimental`, when given, overrides the
    /// profile's: as bluetoothd run with `--experimental`, the adapters export
    /// `org.bluez.AdvertisementMonitorManager1` (on releases that have it) and `Adapter1.ConnectDevice`.
    public static func start(busAddress: String, adapters: Int = 2, profile: BlueZProfile = .bluez5_66,
                             experimental: Bool? = nil, clock: (any TimerClock)? = nil) async throws -> BlueZSimulator {
        let sim = try BlueZSimulator(busAddress: busAddress, adapters: adapters,
                                     profile: experimental.map { profile.experimental($0) } ?? profile, clock: clock)
        try await sim.takeName()
        // L2CAP channels between sessions on this bus go over socket pairs (L2CAPLoopback).
        L2CAPLoopback.enable(forBus: busAddress)
        return sim
    }

    private init(busAddress: String, adapters: Int, profile: BlueZProfile, clock: (any TimerClock)?) throws {
        let queue = DispatchQueue(label: "bluez-sim")
        self.queue = queue
        self.busAddress = busAddress
        self.adapterCount = adapters
        let timing: any TimerClock = clock.map { QueueClock($0, queue: queue) } ?? SystemClock(queue: queue)
        self.core = SimulatorCore(clock: timing, queue: queue)
        self.connection = try Connection(address: busAddress)
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
        bridgeBox = SimulatorBridge(simulator: self)
        queue.sync {
            core.bridge = bridgeBox
            core.monitorBridge = bridgeBox
            core.profile = profile
            bringUp()
            core.start(adapters: adapters)
        }
    }

    /// Builds the exported tree on the current connection (queue).
    func bringUp() {
        let tree = ExportedTree(connection: connection, methods: { [unowned self] in self.methods($0, $1) },
                                setter: { [unowned self] in self.propertySetter($0, $1, $2) })
        self.tree = tree
        core.setSink { [unowned self] event in self.tree.apply(event, store: self.core.store) }
        core.store.silentSink = { [unowned self] path, interface, name, value in self.tree.resync(path, interface, name, value) }
        let connection = self.connection
        core.burstEmitter = { path in
            guard let op = try? ObjectPath(path) else { return { _ in } }
            return { bytes in
                try? connection.emitPropertiesChanged(path: op, interface: "org.bluez.GattCharacteristic1",
                                                      changed: ["Value": .array(element: .byte, bytes.map { .byte($0) })])
            }
        }
        try? tree.exportStatic("/", [objectManagerInterface()])
        try? tree.exportStatic(Self.controlPath, [controlInterface()])
        nameWatch = connection.subscribe(rule: MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                         member: "NameOwnerChanged")) { [weak self] m in
            guard m.body.count == 3, case .string(let name) = m.body[0], case .string(let new) = m.body[2],
                  name.hasPrefix(":"), new.isEmpty else { return }
            guard let self else { return }
            self.queue.async { self.clientLeft(name) }
        }
    }

    /// Takes `org.bluez` on the current connection. After ``restart()`` the daemon may not have
    /// processed the old connection's close yet, and that connection owns the name until it has:
    /// on `.exists` this waits (at most `timeout`) for the `NameOwnerChanged` that releases the
    /// name, then asks once more. Clients see the same signals either way: the name goes to ""
    /// first, then to the new connection.
    func takeName(timeout: Duration = .seconds(5)) async throws {
        let released = NameRelease()
        // Its match rule and GetNameOwner go out before the RequestName below (one connection's
        // messages reach the daemon in order), so no release can be missed.
        let watch = connection.watchNameOwner(Self.busName) { owner in if owner == nil { released.fire() } }
        defer { watch.cancel() }
        var reply = try await connection.requestName(Self.busName, flags: [.doNotQueue])
        if reply == .exists, await released.wait(timeout: timeout, clock: core.clock) {
            reply = try await connection.requestName(Self.busName, flags: [.doNotQueue])
        }
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.Failed", message: "\(Self.busName) is already owned on \(busAddress)")
        }
    }

    /// The BlueZ release imitated (set at ``start(busAddress:adapters:profile:experimental:clock:)``).
    public var profile: BlueZProfile { sync { _ in core.profile } }

    /// The unique name of the connection owning `org.bluez` (changes on `restart()`).
    public var uniqueName: String { sync { _ in connection.uniqueName } }

    /// Releases the name, unexports everything and closes the connection. Idempotent.
    public func stop() {
        sync { _ in
            guard !stopped else { return }
            stopped = true
            L2CAPLoopback.disable(forBus: busAddress)
            core.stopRSSIStorm()
            core.stopNotifyPace()
            releaseHeld()
            nameWatch?.cancel()
            appSignals.values.forEach { $0.cancel() }
            appSignals.removeAll()
            tree.clear()
            connection.close()
            // Work still scheduled on the model must not reach this object once it is gone.
            core.setSink { _ in }
            core.store.silentSink = nil
        }
    }

    deinit {
        core.setSink { _ in }
        core.store.silentSink = nil
        connection.close()
    }

    // MARK: Executor

    /// Runs `body` with the model on the simulator's queue and returns its result (inline when
    /// already on the queue). Use it for anything not covered by the methods below.
    public func sync<T>(_ body: (SimulatorCore) throws -> T) rethrows -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) { return try body(core) }
        return try queue.sync { try body(core) }
    }

    func clientLeft(_ name: String) {
        core.clientVanished(name)
        core.agentGone(owner: name)
        appSignals.removeValue(forKey: name)?.cancel()
    }

    func releaseHeld() {
        for h in held { h.work.cancel() }
        held.removeAll()  // responders answer Failed as they go; their callers have long timed out
        // Nothing will be held any more: waiters go on (and find what they wanted did not happen).
        heldWaiters.releaseAll()
    }
}

// MARK: - Swift API

extension BlueZSimulator {
    /// Puts a peripheral in range of `adapters` (nil: all).
    public func add(_ peripheral: SimulatedPeripheral, inRangeOf adapters: Set<Int>? = nil) {
        sync { $0.addPeripheral(peripheral, inRangeOf: adapters) }
    }

    /// Adds every peripheral of a scenario.
    public func load(_ scenario: Scenario) {
        sync { core in for p in scenario.peripherals {
            if let spec = try? p.peripheral { core.addPeripheral(spec, inRangeOf: p.adapters.map(Set.init)) }
        } }
    }

    /// Removes a peripheral (its links drop).
    public func removePeripheral(_ address: String) { sync { $0.removePeripheral(address.uppercased()) } }

    /// Changes a peripheral (RSSI, name, advertising data…); scanning adapters see the report.
    public func updatePeripheral(_ address: String, _ change: @escaping (inout SimulatedPeripheral) -> Void) {
        sync { $0.updatePeripheral(address.uppercased(), change) }
    }

    /// Fault: a firmware update changes the peripheral's GATT database (links drop; the next
    /// connection publishes the new services, with new handles and object paths).
    public func replaceServices(peripheral address: String, with spec: SimulatedPeripheral) {
        sync { $0.replaceServices(address.uppercased(), spec.services) }
    }

    /// Moves a peripheral in or out of range of adapters (nil: all; empty: none).
    public func setRange(_ address: String, adapters: Set<Int>?) { sync { $0.setRange(address.uppercased(), adapters: adapters) } }

    /// The peripheral notifies `value` on characteristic `uuid`; returns the centrals reached.
    @discardableResult
    public func notify(peripheral address: String, characteristic uuid: String, value: Data) -> Int {
        sync { $0.notify(peripheral: address.uppercased(), characteristic: uuid, value: value) }
    }

    /// The stored value of a peripheral's characteristic (what the last write left).
    public func value(peripheral address: String, characteristic uuid: String) -> Data? {
        sync { $0.peripheralValue(address.uppercased(), characteristic: uuid) }
    }

    /// Fault: `count` notifications as fast as possible (value i = 4 little-endian bytes of i
    /// unless `value` is given). Returns deliveries made and the time taken on the simulator.
    public func burst(peripheral address: String, characteristic uuid: String, count: Int,
                      value: (@Sendable (Int) -> [UInt8])? = nil) -> (delivered: Int, duration: Duration) {
        sync { core in Self.runBurst(core, address, uuid, count, value) }
    }

    /// Emits `count` notifications like ``burst(peripheral:characteristic:count:value:)``,
    /// suspending the caller instead of blocking its thread while the simulator works.
    ///
    /// Use this form from async code: a burst of many values keeps the simulator busy for
    /// seconds, and blocking a concurrency-pool thread that long stalls every other task.
    public func burst(peripheral address: String, characteristic uuid: String, count: Int,
                      value: (@Sendable (Int) -> [UInt8])? = nil) async -> (delivered: Int, duration: Duration) {
        let core = self.core
        return await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Self.runBurst(core, address, uuid, count, value))
            }
        }
    }

    /// The burst itself, on the simulator's queue.
    private static func runBurst(_ core: SimulatorCore, _ address: String, _ uuid: String, _ count: Int,
                                 _ value: (@Sendable (Int) -> [UInt8])?) -> (delivered: Int, duration: Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let make = value ?? { i in withUnsafeBytes(of: UInt32(truncatingIfNeeded: i).littleEndian, Array.init) }
        let n = core.burst(peripheral: address.uppercased(), characteristic: uuid, count: count, value: make)
        return (n, clock.now - start)
    }

    /// Adds a method fault (delay, error reply, no reply).
    public func inject(_ fault: MethodFault) { sync { _ in faults.add(fault) } }

    /// Removes every method fault.
    public func clearFaults() { sync { _ in faults.clear() } }

    /// Suspends until at least `count` calls are held unanswered by the no-reply fault (at once
    /// if they are). A test calls it before ``clearFaults()`` when the calls it faults are sent
    /// from another thread: a call still in flight when the faults are cleared would be answered.
    /// A cancelled task stops waiting.
    public func waitForHeldCalls(atLeast count: Int) async {
        await heldWaiters.wait(for: count) { [self] in sync { _ in held.count } }
    }

    /// Fault: the remote drops the link of the device at `path`.
    public func dropLink(device path: String) { sync { $0.dropLink(device: path) } }

    /// Fault: powers adapter `index` off or on.
    public func setPowered(adapter index: Int, _ on: Bool) { sync { $0.setPowered(index, on) } }

    /// A peripheral that uses privacy (``SimulatedPeripheral/privacy()``) changes its resolvable
    /// private address (`identity`: its ``SimulatedPeripheral/address``). Before it bonds, the
    /// new address is a new device to bluetoothd; after, it resolves to the bonded one.
    public func rotatePrivateAddress(of identity: String) { sync { $0.rotatePrivateAddress(of: identity) } }

    /// Fault: unplugs adapter `index`.
    public func removeAdapter(_ index: Int) { sync { $0.removeAdapter(index) } }

    /// Fault: plugs in a new adapter; returns its index.
    @discardableResult
    public func addAdapter(address: String? = nil) -> Int { sync { $0.addAdapter(address: address) } }

    /// Fault: ServicesResolved=true is published `delay` BEFORE the GATT objects (nil: BlueZ order).
    public func setServicesResolvedEarly(_ delay: Duration?) { sync { $0.servicesResolvedEarly = delay } }

    /// Fault: a central's `Device1.Connected = true` is stored (a `Get` reads it) but never
    /// signalled, as bluetoothd 5.66 does with btvirt (Scripts/bluez-vm/README.md, lesson 11).
    public func setConnectedSignalWithheld(_ on: Bool) { sync { $0.connectedSignalWithheld = on } }

    /// Fault: `devices` devices each changing RSSI `hz` times a second (one timer, batched).
    public func startRSSIStorm(devices: Int, hz: Double, adapters: Set<Int>? = nil) {
        sync { $0.startRSSIStorm(devices: devices, hz: hz, adapters: adapters) }
    }

    /// Stops the RSSI storm.
    public func stopRSSIStorm() { sync { $0.stopRSSIStorm() } }

    /// Fault: each peripheral of `addresses` notifies `uuid` `count` times at `hz`, spread
    /// evenly (``SimulatorCore/startNotifyPace(peripherals:characteristic:hz:count:)``); returns
    /// the devices found.
    @discardableResult
    public func startNotifyPace(peripherals addresses: [String], characteristic uuid: String, hz: Double, count: Int) -> Int {
        sync { $0.startNotifyPace(peripherals: addresses.map { $0.uppercased() }, characteristic: uuid, hz: hz, count: count) }
    }

    /// Stops the paced notification source.
    public func stopNotifyPace() { sync { $0.stopNotifyPace() } }

    /// The paced source's values sent, deliveries made, and whether it is still sending.
    public var notifyPaceStatus: (sent: Int, delivered: Int, running: Bool) { sync { $0.notifyPaceStatus } }

    /// The adapters' object paths.
    public var adapterPaths: [String] { sync { $0.adapterIndexes.map(BlueZPath.adapter) } }

    /// The address of adapter `index`.
    public func adapterAddress(_ index: Int) -> String? { sync { $0.adapterAddress(index) } }

    /// Fault: bluetoothd restarts. The name is released (NameOwnerChanged to ""), then retaken by
    /// a NEW connection (new unique name) with fresh adapters; devices are forgotten.
    /// `graceful` is a stop by SIGTERM (`systemctl restart bluetooth`): bluetoothd first powers
    /// its adapters off (`Powered` false signalled), as 5.66 and 5.82 do; without it, a crash
    /// (SIGKILL): nothing is signalled before the name goes.
    public func restart(graceful: Bool = false) async throws {
        let count = adapterCount
        if graceful {
            for index in 0..<count { setPowered(adapter: index, false) }
        }
        sync { core in
            releaseHeld()
            nameWatch?.cancel()
            appSignals.values.forEach { $0.cancel() }
            appSignals.removeAll()
            tree.clear()
            connection.close()
            core.restart(adapters: 0)
        }
        let fresh = try Connection(address: busAddress)
        sync { core in
            connection = fresh
            core.setSink { _ in }
            bringUp()
            core.restart(adapters: count)
        }
        try await takeName()
    }
}
