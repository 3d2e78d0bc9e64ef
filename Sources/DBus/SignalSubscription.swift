// Subscribing to signals and tracking name owners.
import Synchronization

/// A live signal subscription; `cancel()` (or releasing the handle) ends it.
public final class SignalSubscription: Sendable {
    private let core: ConnectionCore
    private let id: Int
    /// The rule this subscription uses.
    public let rule: MatchRule
    private let cancelled = Atomic<Bool>(false)
    private let trackedName: String?

    init(core: ConnectionCore, id: Int, rule: MatchRule, trackedName: String?) {
        self.core = core
        self.id = id
        self.rule = rule
        self.trackedName = trackedName
    }

    /// Stops delivery; sends RemoveMatch when no other subscription uses the rule. Idempotent.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .sequentiallyConsistent) else { return }
        core.removeSubscriber(id, rule: rule)
        if let trackedName { core.releaseOwnerTracking(trackedName) }
    }

    /// Returns once the bus has accepted the rule's AddMatch, so signals emitted by other
    /// connections from now on will be delivered.
    public func established() async throws(DBusCallError) {
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<Void, DBusCallError>, Never>) in
            core.whenEstablished(rule) { c.resume(returning: $0) }
        }
        try result.get()
    }

    deinit { cancel() }
}

/// Tracks the owner of a bus name; releasing or cancelling the handle stops it.
public final class NameOwnerWatch: Sendable {
    private let subscription: SignalSubscription
    init(subscription: SignalSubscription) { self.subscription = subscription }
    /// Stops reporting. Idempotent.
    public func cancel() { subscription.cancel() }
}

/// The state of one name watch (owner thread only).
///
/// `@unchecked Sendable`: `initialReported` and `last` are touched on the owner thread only.
private final class NameOwnerState: @unchecked Sendable {
    var initialReported = false
    var last: String??
    let handler: @Sendable (String?) -> Void
    init(handler: @escaping @Sendable (String?) -> Void) { self.handler = handler }
    func report(_ owner: String?) {
        if case .some(let previous) = last, previous == owner { return }
        last = .some(owner)
        handler(owner)
    }
}

extension Connection {
    /// Subscribes `handler` to messages matching `rule` (`org.freedesktop.DBus.AddMatch`).
    /// Identical rules share one AddMatch; the handler runs on the owner thread.
    public func subscribe(rule: MatchRule, _ handler: @escaping @Sendable (Message) -> Void) -> SignalSubscription {
        core.subscribe(rule: rule, handler)
    }

    /// Like ``subscribe(rule:_:)``, with `peek` run first on each matching signal, read in place
    /// (``SignalView``): when it returns true the signal counts as handled and `handler` is not
    /// called (and the message is not decoded for it). For frequent signals whose common shape
    /// needs one field; `peek` runs on the owner thread and must not block.
    public func subscribe(rule: MatchRule, peek: @escaping @Sendable (SignalView) -> Bool,
                          _ handler: @escaping @Sendable (Message) -> Void) -> SignalSubscription {
        core.subscribe(rule: rule, peek: peek, handler)
    }

    /// Reports the current owner of `name` (`GetNameOwner`), then every change
    /// (`NameOwnerChanged`); nil means no owner. Runs `handler` on the owner thread.
    public func watchNameOwner(_ name: String, _ handler: @escaping @Sendable (String?) -> Void) -> NameOwnerWatch {
        NameOwnerWatch(subscription: core.watchNameOwner(name, handler))
    }
}

extension ConnectionCore {
    func subscribe(rule: MatchRule, peek: (@Sendable (SignalView) -> Bool)? = nil,
                   _ handler: @escaping @Sendable (Message) -> Void) -> SignalSubscription {
        var tracked: String?
        if let sender = rule.sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" {
            tracked = sender
            acquireOwnerTracking(sender)
        }
        let id = addSubscriber(rule, peek: peek, handler: handler)
        return SignalSubscription(core: self, id: id, rule: rule, trackedName: tracked)
    }

    func watchNameOwner(_ name: String, _ handler: @escaping @Sendable (String?) -> Void) -> SignalSubscription {
        let state = NameOwnerState(handler: handler)
        let rule = MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                             member: "NameOwnerChanged", path: "/org/freedesktop/DBus", arg0: name)
        let sub = subscribe(rule: rule) { message in
            guard state.initialReported, message.body.count == 3,
                  case .string(let newOwner) = message.body[2] else { return }
            state.report(newOwner.isEmpty ? nil : newOwner)
        }
        busCall("GetNameOwner", [.string(name)]) { result in
            state.initialReported = true
            switch result {
            case .success(let reply): state.report(try? reply.body.decode(String.self, at: 0))
            case .failure(.remote): state.report(nil)
            case .failure: break
            }
        }
        return sub
    }

    /// Keeps `SignalTable.owners[name]` current while some rule uses `name` as its sender.
    func acquireOwnerTracking(_ name: String) {
        let first = signals.withLock { table -> Bool in
            table.trackedNames[name, default: 0] += 1
            return table.trackedNames[name] == 1
        }
        guard first else { return }
        let watch = watchNameOwner(name) { [weak self] owner in
            self?.signals.withLock { table in
                guard table.trackedNames[name] != nil else { return }
                table.owners[name] = owner ?? ""
            }
        }
        ownerWatches.withLock { $0[name] = watch }
    }

    func releaseOwnerTracking(_ name: String) {
        let last = signals.withLock { table -> Bool in
            guard let n = table.trackedNames[name] else { return false }
            if n > 1 {
                table.trackedNames[name] = n - 1
                return false
            }
            table.trackedNames.removeValue(forKey: name)
            table.owners.removeValue(forKey: name)
            return true
        }
        if last { ownerWatches.withLock { $0.removeValue(forKey: name) }?.cancel() }
    }
}
