// ReplayState: where a replay stands in its recording: which calls were answered, which
// signals sent, what diverged. No D-Bus here: BlueZReplayer performs what it decides.

// MARK: - ReplayState

/// The progress of a replay through ``BlueZScenario/events``: which calls were answered,
/// which signals sent, what diverged. A call of the app is matched against the first
/// unanswered recorded call, those that were in flight with it in the recording (sent before
/// its reply came) and the next `lookahead` unanswered calls: calls the app makes concurrently
/// (a `StopDiscovery` racing a `Connect`) may arrive in another order when replies come at
/// other times than in the recording. A call matching none of them diverges.
struct ReplayState {
    let events: [ScenarioEvent]
    /// Per event: answered (calls), sent (signals), made (incoming).
    private(set) var reached: [Bool]
    private(set) var divergences: [String] = []
    /// How many unanswered calls after the first a call may match.
    let lookahead: Int
    /// Per event: an unordered call the app made while another of its calls was in flight. Its
    /// place is not fixed (it raced) and the app may not make it again (it stopped discovery
    /// once, not twice): the replay does not wait for it.
    let racing: [Bool]
    /// Per event: for a call the app made while bluetoothd was away (between a recorded
    /// `NameOwnerChanged` of `org.bluez` to nobody and the next one), answered by the bus, the
    /// index of the app's first call after bluetoothd came back. The replay does not wait for
    /// such a call. Made later than recorded (the replayed bluetoothd is back already), before
    /// that first call, it gets the recorded answer at once, as often as it comes, and takes no
    /// later call's place.
    let whileAway: [Int?]

    /// Calls (`interface.member`) the app may make any number of times anywhere (see
    /// ``BlueZReplayer/defaultUnordered``): never awaited, never divergent, never unreached.
    let unordered: Set<String>

    /// Recorded object path → the app's path in this run, learned as calls match (see
    /// ``ReplayPaths``).
    private(set) var paths = ReplayPaths()

    init(events: [ScenarioEvent], lookahead: Int = 4, unordered: Set<String> = []) {
        self.events = events
        self.lookahead = lookahead
        self.unordered = unordered
        reached = Array(repeating: false, count: events.count)
        var racing = Array(repeating: false, count: events.count)
        var inFlightUntil: Duration?
        for (i, e) in events.enumerated() {
            guard case .call(let at, let m, _, let latency) = e, !Self.isFree(m) else { continue }
            if let until = inFlightUntil, at < until, unordered.contains("\(m.interface).\(m.member)") { racing[i] = true }
            inFlightUntil = max(inFlightUntil ?? .zero, at + latency)
        }
        var whileAway = [Int?](repeating: nil, count: events.count)
        var away = false, gap: [Int] = []
        for (i, e) in events.enumerated() {
            switch e {
            case .signal(_, let m) where m.interface == "org.freedesktop.DBus" && m.member == "NameOwnerChanged":
                if m.arguments.count == 3, case .string(let owner) = m.arguments[2] { away = owner.isEmpty }
            case .call(_, let m, _, _) where !Self.isFree(m):
                if away {
                    gap.append(i)
                    racing[i] = true
                } else {
                    for g in gap { whileAway[g] = i }
                    gap.removeAll()
                }
            default: break
            }
        }
        for g in gap { whileAway[g] = events.count }
        self.racing = racing
        self.whileAway = whileAway
        for (i, e) in events.enumerated() {
            if case .call(_, let m, _, _) = e, Self.isFree(m) { reached[i] = true }
        }
    }

    /// Calls answered from the object tree, whatever the recording says: reading properties,
    /// the managed objects, introspection. They are neither matched nor reported unreached.
    static func isFree(_ m: ScenarioMessage) -> Bool {
        switch (m.interface, m.member) {
        case ("org.freedesktop.DBus.Properties", "Get"), ("org.freedesktop.DBus.Properties", "GetAll"),
             ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"),
             ("org.freedesktop.DBus.Introspectable", "Introspect"), ("org.freedesktop.DBus.Peer", "Ping"):
            true
        default: false
        }
    }

    // MARK: Matching

    /// What to do with a call of the app.
    enum Match {
        /// Recorded call `index`, answered `outcome`; `inOrder` when it is the first call not
        /// yet answered (the replay then answers it in its place among the recorded events).
        case matched(index: Int, outcome: ScenarioOutcome, inOrder: Bool)
        /// An unordered call: answer `outcome` now.
        case unordered(ScenarioOutcome)
        /// The call is not the recording's: fail it with `message`.
        case diverged(String)
    }

    /// Matches `seen` against the recording and marks it answered.
    mutating func match(_ seen: ScenarioMessage) -> Match {
        let isUnordered = unordered.contains("\(seen.interface).\(seen.member)")
        let next = events.indices.first { !reached[$0] && isCall($0) && !racing[$0] } ?? events.count
        // Made later in this run than recorded, it gets its recorded answer and takes no later
        // call's place: an unordered call that raced another one in the recording, or a call
        // made while bluetoothd was away (``whileAway``).
        let racedLate = isUnordered
            ? events.indices.first { $0 < next && racing[$0] && !reached[$0] && paths.same(events[$0].message, seen) } : nil
        if let late = racedLate ?? events.indices.first(where: { whileAway[$0].map { next <= $0 } ?? false && paths.same(events[$0].message, seen) }),
           case .call(_, _, let outcome, _) = events[late] {
            reached[late] = true
            return .matched(index: late, outcome: outcome, inOrder: false)
        }
        // The first unanswered call in its place (computed above, before the late calls).
        guard next < events.count else {
            if isUnordered { return tolerate(seen) }
            return diverge("replay diverged: the recording has no more calls of the app, seen \(seen)")
        }
        let first = next
        var ahead = 0
        let window = events.indices.filter { i in
            guard i >= first, !reached[i], case .call(let at, _, _, _) = events[i] else { return false }
            ahead += 1
            return ahead <= lookahead + 1 || at <= replyTime(first)
        }
        guard let hit = window.first(where: { paths.same(events[$0].message, seen) }),
              case .call(_, _, let outcome, _) = events[hit] else {
            if isUnordered { return tolerate(seen) }
            return diverge("replay diverged at recorded call \(first + 1) of \(events.count) events: expected \(events[first].message), seen \(seen)")
        }
        // The app went past unordered calls recorded before this one: it made them fewer times
        // this run. They are not waited for, and this call takes its place in order.
        let passed = (first..<hit).filter { !reached[$0] && isCall($0) && !racing[$0] }
        let skipsOnlyUnordered = !passed.isEmpty && passed.allSatisfy { unordered.contains("\(events[$0].message.interface).\(events[$0].message.member)") }
        if skipsOnlyUnordered { for i in passed { reached[i] = true } }
        reached[hit] = true
        paths.learn(events[hit].message, seen)
        return .matched(index: hit, outcome: outcome, inOrder: (hit == first || skipsOnlyUnordered) && !racing[hit])
    }

    /// An unordered call beyond the recorded ones: answered as the same call was last recorded
    /// (success when never).
    private func tolerate(_ seen: ScenarioMessage) -> Match {
        let same = events.indices.last { events[$0].isCall && paths.same(events[$0].message, seen) }
        if let same, case .call(_, _, let outcome, _) = events[same] { return .unordered(outcome) }
        return .unordered(.reply([]))
    }

    /// Marks a signal sent or an incoming call made.
    mutating func markReached(_ index: Int) { reached[index] = true }

    /// Records a divergence found elsewhere (the app's answer to an incoming call).
    mutating func record(_ divergence: String) { divergences.append(divergence) }

    private mutating func diverge(_ message: String) -> Match {
        divergences.append(message)
        return .diverged(message)
    }

    func isCall(_ i: Int) -> Bool { if case .call = events[i] { true } else { false } }

    private func replyTime(_ i: Int) -> Duration {
        if case .call(let at, _, _, let latency) = events[i] { at + latency } else { events[i].at }
    }

    // MARK: Report

    /// What of the recording was never reached, and every divergence.
    var report: ReplayReport {
        // Unordered calls are optional: the app may make them fewer times than recorded.
        ReplayReport(divergences: divergences, unreached: events.indices.filter {
            !reached[$0] && whileAway[$0] == nil && !(isCall($0) && unordered.contains("\(events[$0].message.interface).\(events[$0].message.member)"))
        }.map { ($0 + 1, events[$0]) })
    }
}
