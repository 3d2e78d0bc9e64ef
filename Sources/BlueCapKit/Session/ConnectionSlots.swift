// ConnectionSlots: the session's per-adapter budget of LE connections; connects queue when an
// adapter's slots are full.
import BlueZ
import DBus
import Futures
import Locking

// MARK: - ConnectionSlots

/// Each adapter's budget of LE connections, shared by every ``CentralManager`` of a
/// ``BluetoothSession`` (``BluetoothSession/connectionSlots``).
///
/// A controller holds a handful of LE connections; past that, `org.bluez.Device1.Connect` fails
/// (`Failed` "le-connection-abort-by-local", or the controller's own error), and retries only
/// hammer it. The session counts each adapter's slots from what BlueZ reports — every device
/// with `Device1.Connected`, ours and other programs' — plus this session's connects under way,
/// and a ``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``
/// that finds its adapter full waits in a queue:
/// - in order of request; a connect cancelled while waiting (``Peripheral/disconnect()``,
///   ``Peripheral/terminate()``) leaves the queue at once;
/// - each disconnection (ours or another program's) or ended attempt frees a slot for the first
///   waiting connect;
/// - a connect that waited ``queueTimeout`` fails with `.noConnectionSlot`,
///   naming the adapter and its usage. The wait does not count against the connect's own
///   `connectionTimeout`, which starts when the slot is granted.
///
/// The default budget, ``defaultBudget`` (5), is what the usual controllers hold with room to
/// spare: the kernel does not say a controller's limit, common USB and on-board controllers
/// hold 5 to 10 LE links, and a connect past the real limit costs seconds before failing. Set
/// the real figure with ``setBudget(_:for:)`` when you know it.
///
/// With several adapters, ``bestAdapter(forAddress:)`` names the one that heard a device best
/// among those with a free slot.
public final class ConnectionSlots: Sendable {
    /// The budget of an adapter no ``setBudget(_:for:)`` named.
    public static let defaultBudget = 5

    private let tree: ObjectTree?
    private let clock: any TimerClock
    private let state = Locked(State())

    /// A connect waiting for a slot.
    private struct Waiter {
        let id: Int
        let device: ObjectPath
        let grant: @Sendable (Result<Void, BlueCapError>) -> Void
        var timer: ScheduledTask?
    }

    private struct State {
        var defaultBudget = ConnectionSlots.defaultBudget
        var budgets: [String: Int] = [:]
        var queueTimeout: Duration = .seconds(30)
        /// Adapter path → devices whose connect of ours holds a slot.
        var held: [ObjectPath: Set<ObjectPath>] = [:]
        /// Adapter path → held devices whose link is up as their ``Peripheral`` knows it: counted
        /// connected even when BlueZ never signals `Connected = true` (VM README, lesson 11).
        var linked: [ObjectPath: Set<ObjectPath>] = [:]
        /// Adapter path → connects waiting, first first.
        var queues: [ObjectPath: [Waiter]] = [:]
        var nextID = 0
        /// Observes the tree while any connect waits (disconnections free slots) or any
        /// ``whenUsageChanges()`` stream is open (connections of other programs change usage).
        var observation: ObjectTreeObservation?
        /// ``whenUsageChanges()``'s streams, by id.
        var watchers: [Int: StreamPromise<SlotUsage>] = [:]
        /// The last usage pushed per adapter path, so that a stream sees changes only.
        var lastPushed: [ObjectPath: SlotUsage] = [:]
    }

    init(tree: ObjectTree?, clock: any TimerClock) {
        self.tree = tree
        self.clock = clock
    }

    // MARK: Budget and usage

    /// The budget of `adapter` (`"hci0"`): the one set by ``setBudget(_:for:)``, else the
    /// default (``defaultBudget`` unless changed with `setBudget(_:for: nil)`).
    public func budget(for adapter: String) -> Int {
        state.withLock { $0.budgets[adapter] ?? $0.defaultBudget }
    }

    /// Sets `adapter`'s budget (at least 1), or the default of every adapter not named when
    /// `adapter` is nil. A larger budget lets queued connects go at once.
    public func setBudget(_ budget: Int, for adapter: String?) {
        state.withLock { s in
            if let adapter { s.budgets[adapter] = max(1, budget) } else { s.defaultBudget = max(1, budget) }
        }
        pumpAll()
        for adapter in usage.map({ Self.adapterPath($0.adapter) }) { changed(adapter) }
    }

    /// How long a connect waits for a slot before failing with
    /// `.noConnectionSlot` (30 s by default).
    public var queueTimeout: Duration {
        get { state.withLock { $0.queueTimeout } }
        set { state.withLock { $0.queueTimeout = newValue } }
    }

    /// `adapter`'s slots now (`"hci0"`).
    public func usage(of adapter: String) -> SlotUsage {
        let path = Self.adapterPath(adapter)
        let connected = connectedDevices(on: path)
        return state.withLock { s in usage(path, s, connected: connected) }
    }

    /// Every adapter BlueZ has, and every adapter with a connect held or waiting.
    public var usage: [SlotUsage] {
        let known = state.withLock { s in Set(s.held.keys).union(s.queues.keys) }
        let adapters = known.union(tree?.paths(withInterface: Adapter1.interface) ?? []).sorted { $0.rawValue < $1.rawValue }
        let connected = adapters.map { connectedDevices(on: $0) }
        return state.withLock { s in zip(adapters, connected).map { usage($0, s, connected: $1) } }
    }

    /// A stream of ``SlotUsage``: an adapter's usage each time it changes — a connect granted,
    /// queued, given up or timed out, a budget set, a device of the adapter connected or
    /// disconnected (by this process or another). It keeps the last 16 for replay (older ones
    /// are dropped) and goes on until every subscription of it is cancelled.
    public func whenUsageChanges() -> FutureStream<SlotUsage> {
        let promise = StreamPromise<SlotUsage>(capacity: 16)
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.watchers[s.nextID] = promise
            return s.nextID
        }
        promise.onAbandoned { [weak self] in
            guard let self else { return }
            self.state.withLock { s in _ = s.watchers.removeValue(forKey: id) }
            self.stopObservingWhenIdle()
        }
        observe()
        return promise.stream
    }

    // MARK: Choosing an adapter

    /// Among the adapters whose BlueZ has a device with `address` (`"AA:BB:CC:DD:EE:FF"`, any
    /// case) and a free slot, the one that heard it best (highest `Device1.RSSI`; a device
    /// without RSSI ranks last, ties go to the lower adapter). Nil when no adapter with a free slot
    /// knows the device: scan on more adapters, or wait for a slot.
    public func bestAdapter(forAddress address: String) -> String? {
        guard let tree else { return nil }
        let wanted = address.uppercased()
        var candidates: [(adapter: ObjectPath, rssi: Int)] = []
        for device in tree.devicePaths(withAddress: wanted) {
            guard let adapter = device.deviceAdapter else { continue }
            let rssi = tree.properties(at: device, interface: Device1.interface)?["RSSI"].flatMap { v -> Int? in
                if case .int16(let r) = v { return Int(r) } else { return nil }
            } ?? Int.min
            candidates.append((adapter, rssi))
        }
        let connected = candidates.map { connectedDevices(on: $0.adapter) }
        let free = state.withLock { s in zip(candidates, connected).filter { usage($0.adapter, s, connected: $1).free > 0 }.map(\.0) }
        let best = free.sorted { ($0.rssi, $1.adapter.rawValue) > ($1.rssi, $0.adapter.rawValue) }.first
        return best.map { Adapter1.name(of: $0.adapter) }
    }

    // MARK: Acquiring and releasing (Peripheral)

    /// Asks a slot for `device`'s connect; `grant` runs (never under a lock) with success when
    /// the slot is held — at once when the device holds one already, is connected, or its adapter
    /// has a free slot and nobody waits — or with `.noConnectionSlot` after
    /// ``queueTimeout``.
    func acquire(_ device: ObjectPath, grant: @escaping @Sendable (Result<Void, BlueCapError>) -> Void) {
        guard let adapter = device.deviceAdapter else { return grant(.success(())) }
        let connected = connectedDevices(on: adapter)
        let (now, id, timeout) = state.withLock { s -> (Bool, Int, Duration) in
            if s.held[adapter]?.contains(device) == true || connected.contains(device)
                || ((s.queues[adapter] ?? []).isEmpty && usage(adapter, s, connected: connected).free > 0) {
                s.held[adapter, default: []].insert(device)
                return (true, 0, .zero)
            }
            s.nextID += 1
            s.queues[adapter, default: []].append(Waiter(id: s.nextID, device: device, grant: grant))
            return (false, s.nextID, s.queueTimeout)
        }
        changed(adapter)
        if now { return grant(.success(())) }
        observe()
        let timer = clock.schedule(after: timeout) { [weak self] in self?.expire(id, adapter: adapter) }
        let late = state.withLock { s -> Bool in
            guard let i = s.queues[adapter]?.firstIndex(where: { $0.id == id }) else { return true }
            s.queues[adapter]?[i].timer = timer
            return false
        }
        if late { timer.cancel() }
    }

    /// `device`'s link, made without a slot asked for (`Adapter1.ConnectDevice`, another
    /// client's connect that the app's `connect` took over), is this session's from now on.
    func adopt(_ device: ObjectPath) {
        guard let adapter = device.deviceAdapter else { return }
        state.withLock { s in _ = s.held[adapter, default: []].insert(device) }
        changed(adapter)
    }

    /// `device`'s link, which holds a slot, is up (`up`) or no longer up, as its ``Peripheral``
    /// knows it: the usage counts it connected whatever `Device1.Connected` the tree has.
    func linkIsUp(_ device: ObjectPath, _ up: Bool) {
        guard let adapter = device.deviceAdapter else { return }
        let changed = state.withLock { s -> Bool in
            if up {
                guard s.held[adapter]?.contains(device) == true else { return false }
                return s.linked[adapter, default: []].insert(device).inserted
            }
            return s.linked[adapter]?.remove(device) != nil
        }
        if changed { self.changed(adapter) }
    }

    /// `device`'s connect no longer needs its slot (its link is down, its attempt ended, or it
    /// was cancelled while waiting): the slot, or its place in the queue, goes to the next.
    func release(_ device: ObjectPath) {
        guard let adapter = device.deviceAdapter else { return }
        let timers = state.withLock { s -> [ScheduledTask] in
            s.held[adapter]?.remove(device)
            s.linked[adapter]?.remove(device)
            let gone = s.queues[adapter]?.filter { $0.device == device } ?? []
            s.queues[adapter]?.removeAll { $0.device == device }
            return gone.compactMap(\.timer)
        }
        for t in timers { t.cancel() }
        pump(adapter)
        changed(adapter)
    }

    // MARK: Queue

    /// Grants slots to `adapter`'s first waiters while it has free ones.
    private func pump(_ adapter: ObjectPath) {
        let connected = connectedDevices(on: adapter)
        let granted = state.withLock { s -> [Waiter] in
            var out: [Waiter] = []
            while let first = s.queues[adapter]?.first, usage(adapter, s, connected: connected).free > 0 || connected.contains(first.device) {
                s.queues[adapter]?.removeFirst()
                s.held[adapter, default: []].insert(first.device)
                out.append(first)
            }
            return out
        }
        for w in granted {
            w.timer?.cancel()
            w.grant(.success(()))
        }
        if !granted.isEmpty { changed(adapter) }
        stopObservingWhenIdle()
    }

    private func pumpAll() {
        for adapter in state.withLock({ Array($0.queues.keys) }) { pump(adapter) }
    }

    /// The waiter `id` waited too long.
    private func expire(_ id: Int, adapter: ObjectPath) {
        let connected = connectedDevices(on: adapter)
        let expired = state.withLock { s -> (Waiter, SlotUsage)? in
            guard let i = s.queues[adapter]?.firstIndex(where: { $0.id == id }), let w = s.queues[adapter]?.remove(at: i) else { return nil }
            return (w, usage(adapter, s, connected: connected))
        }
        guard let (waiter, usage) = expired else { return }
        changed(adapter)
        let timeout = queueTimeout
        waiter.grant(.failure(BlueCapError(
            kind: .noConnectionSlot, operation: "Peripheral.connect (org.bluez.Device1.Connect)", path: waiter.device.rawValue,
            timeout: timeout,
            message: "no connection slot free on \(usage.adapter) within \(timeout) (\(usage)) — disconnect a device, "
                + "or raise the budget (session.connectionSlots.setBudget(_:for:)) if the controller holds more")))
        stopObservingWhenIdle()
    }

    /// While connects wait or usage is watched, connections, disconnections and removed devices
    /// pump the queues and are reported.
    private func observe() {
        guard let tree, state.withLock({ $0.observation == nil }) else { return }
        let observation = tree.observe { [weak self] event in
            switch event {
            case .propertiesChanged(let path, Device1.interface, let changed, _) where changed["Connected"] != nil:
                if let adapter = path.deviceAdapter { self?.pump(adapter); self?.changed(adapter) }
            case .interfacesRemoved(let path, _):
                if let adapter = path.deviceAdapter { self?.pump(adapter); self?.changed(adapter) }
            case .ownerChanged:
                self?.pumpAll()
            default:
                break
            }
        }
        let extra = state.withLock { s -> ObjectTreeObservation? in
            if s.observation != nil { return observation }
            s.observation = observation
            return nil
        }
        extra?.cancel()
        // A disconnection between the count and the observation would otherwise go unseen.
        pumpAll()
    }

    private func stopObservingWhenIdle() {
        let idle = state.withLock { s -> ObjectTreeObservation? in
            guard s.queues.values.allSatisfy(\.isEmpty), s.watchers.isEmpty else { return nil }
            defer { s.observation = nil }
            return s.observation
        }
        idle?.cancel()
    }

    /// Pushes `adapter`'s usage to the ``whenUsageChanges()`` streams when it differs from the
    /// last pushed (outside the lock).
    private func changed(_ adapter: ObjectPath) {
        guard state.withLock({ !$0.watchers.isEmpty }) else { return }
        let connected = connectedDevices(on: adapter)
        let (usage, watchers) = state.withLock { s -> (SlotUsage, [StreamPromise<SlotUsage>]) in
            let u = self.usage(adapter, s, connected: connected)
            guard s.lastPushed[adapter] != u else { return (u, []) }
            s.lastPushed[adapter] = u
            return (u, Array(s.watchers.values))
        }
        for w in watchers { w.success(usage) }
    }

    // MARK: Counting

    /// Devices under `adapter` with `Device1.Connected` true.
    private func connectedDevices(on adapter: ObjectPath) -> Set<ObjectPath> {
        Set(tree?.connectedDevices(under: adapter) ?? [])
    }

    private func usage(_ adapter: ObjectPath, _ s: State, connected: Set<ObjectPath>) -> SlotUsage {
        let name = Adapter1.name(of: adapter)
        let held = s.held[adapter] ?? []
        let connected = connected.union(s.linked[adapter] ?? [])
        return SlotUsage(adapter: name, budget: s.budgets[name] ?? s.defaultBudget, connected: connected.count,
                         connectedByOthers: connected.subtracting(held).count, connecting: held.subtracting(connected).count,
                         queued: s.queues[adapter]?.count ?? 0)
    }

    private static func adapterPath(_ name: String) -> ObjectPath {
        (try? ObjectPath("/org/bluez/\(name)")) ?? "/org/bluez"
    }
}
