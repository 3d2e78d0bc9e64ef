// Signal subscriptions: reference-counted match rules and O(1) local dispatch.

/// Index key: a subscription is filed under its rule's (interface, member, path), any of which
/// may be a wildcard; a signal is looked up under the 8 combinations of its own values.
struct SignalKey: Hashable {
    var interface: String?
    var member: String?
    var path: String?
}

struct SignalTable: Sendable {
    /// A class, so that handing the candidates of a signal around (and iterating them) retains
    /// one reference each instead of copying the rule's Strings and both closures.
    final class Subscriber: Sendable {
        let rule: MatchRule
        /// Looks at the signal in place first; returning true means it was handled.
        let peek: (@Sendable (SignalView) -> Bool)?
        let handler: @Sendable (Message) -> Void

        init(rule: MatchRule, peek: (@Sendable (SignalView) -> Bool)?, handler: @escaping @Sendable (Message) -> Void) {
            self.rule = rule
            self.peek = peek
            self.handler = handler
        }
    }
    struct RuleState: Sendable {
        var count = 0
        var established = false
        var failure: DBusCallError?
        var waiters: [@Sendable (Result<Void, DBusCallError>) -> Void] = []
    }

    var buckets: [SignalKey: [Int: Subscriber]] = [:] {
        didSet { lastLookup = nil }
    }
    /// The subscribers found for the last signal, by its interface and member, when no
    /// subscriber with a fixed path could match that interface and member; kept until the
    /// buckets change. Consecutive signals of one kind (a notification burst, a scan storm) are
    /// matched without hashing their header strings.
    /// `owners` holds each candidate's `owners[rule.sender]` at the time of the lookup (empty
    /// when no name is tracked); the cache is dropped when `owners` changes.
    var lastLookup: (interface: String?, member: String?, candidates: [Subscriber], owners: [String?])?
    /// Subscribers per key shape (which of interface, member, path the key fixes, see
    /// ``shape(_:)``): a signal is looked up only under the shapes in use, not all 8.
    var shapeCounts = [Int](repeating: 0, count: 8)
    var rules: [String: RuleState] = [:]
    var nextID = 1
    /// Well-known name → current unique owner, for names used as a `sender` in a rule.
    var owners: [String: String] = [:] {
        didSet { lastLookup = nil }
    }
    /// Well-known names being tracked for `owners`, with reference counts.
    var trackedNames: [String: Int] = [:]

    static func key(for rule: MatchRule) -> SignalKey {
        SignalKey(interface: rule.interface, member: rule.member, path: rule.path?.rawValue)
    }

    /// 0...7: bit 2 interface fixed, bit 1 member fixed, bit 0 path fixed.
    static func shape(_ key: SignalKey) -> Int {
        (key.interface != nil ? 4 : 0) | (key.member != nil ? 2 : 0) | (key.path != nil ? 1 : 0)
    }
}

extension ConnectionCore {
    /// Delivers a signal to matching subscribers (owner thread; handlers run without a lock held).
    /// Subscribers with a `peek` see the signal in place first; the `Message` is decoded only
    /// when a subscriber still needs it.
    func dispatchSignal(_ raw: RawMessage) {
        let path = LibDBus.path(raw, reusing: ownerLastSignalPath)
        ownerLastSignalPath = path
        var candidates: [SignalTable.Subscriber] = []
        // The current owner of each candidate's rule sender (parallel to `candidates`; empty
        // when no well-known name is tracked).
        var owners: [String?] = []
        // Set when the header's interface and member are those of the last lookup, compared in
        // place: the candidates then match them (no Strings made for them).
        var headerMatched = false
        var interface: String?
        var member: String?
        signals.withLock { table in
            guard !table.buckets.isEmpty else { return }
            if let last = table.lastLookup, LibDBus.hasHeader(raw, interface: last.interface, member: last.member) {
                candidates = last.candidates
                owners = last.owners
                headerMatched = true
            } else {
                interface = LibDBus.interface(raw)
                member = LibDBus.member(raw)
                for shape in 0..<8 where table.shapeCounts[shape] > 0 {
                    if (shape & 4 != 0 && interface == nil) || (shape & 2 != 0 && member == nil) || (shape & 1 != 0 && path == nil) {
                        continue
                    }
                    let key = SignalKey(interface: shape & 4 != 0 ? interface : nil, member: shape & 2 != 0 ? member : nil,
                                        path: shape & 1 != 0 ? path : nil)
                    if let bucket = table.buckets[key] { candidates.append(contentsOf: bucket.values) }
                }
                let pathDependent = table.buckets.keys.contains { key in
                    key.path != nil && (key.interface == nil || key.interface == interface) && (key.member == nil || key.member == member)
                }
                if !table.owners.isEmpty, candidates.contains(where: { $0.rule.sender != nil }) {
                    owners = candidates.map { s in s.rule.sender.flatMap { table.owners[$0] } }
                }
                if !pathDependent { table.lastLookup = (interface, member, candidates, owners) }
            }
        }
        guard !candidates.isEmpty else { return }
        let sender = LibDBus.sender(raw)
        let objectPath = path.map { ObjectPath(unchecked: $0) }
        var message: Message?
        for (index, s) in candidates.enumerated() {
            // A cached lookup's candidates were filed under this interface and member (or a
            // wildcard for them), and none of them fixes a path.
            if !headerMatched {
                if let i = s.rule.interface, i != interface { continue }
                if let m = s.rule.member, m != member { continue }
                if let p = s.rule.path, p != objectPath { continue }
            }
            if let namespace = s.rule.pathNamespace {
                guard let objectPath, objectPath.isDescendant(of: namespace) else { continue }
            }
            if let arg0 = s.rule.arg0, !LibDBus.firstStringEquals(raw, arg0) { continue }
            if let ruleSender = s.rule.sender, ruleSender != sender {
                if ruleSender.utf8.first == UInt8(ascii: ":") { continue }
                if !owners.isEmpty, let owner = owners[index], owner != sender { continue }
                if ruleSender == "org.freedesktop.DBus" { continue }
            }
            if let peek = s.peek, peek(SignalView(raw: raw, path: objectPath, sender: sender)) { continue }
            if message == nil { message = Message(raw: raw) }
            s.handler(message!)
        }
    }

    /// Adds a subscriber; sends AddMatch when the rule is new. Returns the subscriber id.
    func addSubscriber(_ rule: MatchRule, peek: (@Sendable (SignalView) -> Bool)? = nil,
                       handler: @escaping @Sendable (Message) -> Void) -> Int {
        let text = rule.text
        let (id, isNew) = signals.withLock { table -> (Int, Bool) in
            let id = table.nextID
            table.nextID += 1
            let key = SignalTable.key(for: rule)
            table.buckets[key, default: [:]][id] = .init(rule: rule, peek: peek, handler: handler)
            table.shapeCounts[SignalTable.shape(key)] += 1
            table.rules[text, default: .init()].count += 1
            return (id, table.rules[text]!.count == 1)
        }
        if isNew {
            stats.withLock { $0.addMatchSent += 1 }
            busCall("AddMatch", [.string(text)]) { [self] result in
                let waiters = signals.withLock { table -> [@Sendable (Result<Void, DBusCallError>) -> Void] in
                    guard table.rules[text] != nil else { return [] }
                    switch result {
                    case .success: table.rules[text]!.established = true
                    case .failure(let e): table.rules[text]!.failure = e
                    }
                    let w = table.rules[text]!.waiters
                    table.rules[text]!.waiters = []
                    return w
                }
                for w in waiters { w(result.map { _ in () }) }
            }
        }
        return id
    }

    /// Removes a subscriber; sends RemoveMatch when it was the rule's last.
    func removeSubscriber(_ id: Int, rule: MatchRule) {
        let text = rule.text
        let last = signals.withLock { table -> Bool in
            let key = SignalTable.key(for: rule)
            guard table.buckets[key]?.removeValue(forKey: id) != nil else { return false }
            table.shapeCounts[SignalTable.shape(key)] -= 1
            if table.buckets[key]!.isEmpty { table.buckets.removeValue(forKey: key) }
            table.rules[text]!.count -= 1
            if table.rules[text]!.count == 0 {
                table.rules.removeValue(forKey: text)
                return true
            }
            return false
        }
        if last {
            stats.withLock { $0.removeMatchSent += 1 }
            busCall("RemoveMatch", [.string(text)]) { _ in }
        }
    }

    /// Calls `completion` once the rule's AddMatch has been answered.
    func whenEstablished(_ rule: MatchRule, _ completion: @escaping @Sendable (Result<Void, DBusCallError>) -> Void) {
        let text = rule.text
        let immediate: Result<Void, DBusCallError>? = signals.withLock { table in
            guard let state = table.rules[text] else { return .failure(.disconnected) }
            if state.established { return .success(()) }
            if let f = state.failure { return .failure(f) }
            table.rules[text]!.waiters.append(completion)
            return nil
        }
        if let immediate { completion(immediate) }
    }

    /// A method call on the bus daemon.
    func busCall(_ member: String, _ args: [DBusValue], timeout: Duration = .seconds(25),
                 completion: @escaping @Sendable (Result<Message, DBusCallError>) -> Void) {
        do {
            let m = try MessageBuilder.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: member, arguments: args)
            call(m, timeout: timeout, completion: completion)
        } catch {
            completion(.failure(error))
        }
    }
}
