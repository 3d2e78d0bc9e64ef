// ReplayState: where a replay stands in its recording: which calls were answered, which
// signals sent, what diverged. No D-Bus here: BlueZReplayer performs what it decides.

// MARK: - ReplayState

/// The progress of a replay through ``BlueZScenario/events``. A call of the app is matched
/// against the first unanswered recorded call and those that were in flight with it in the
/// recording (sent before its reply came), so concurrent calls may arrive in either order.
/// Signals and BlueZ's calls into the app hang on the last call of the app before them (their
/// anchor): they go out once that call is answered, at their recorded distance from its reply
/// (right before the reply when they came before it). Those before any call are timed from the
/// start.
struct ReplayState {
    let events: [ScenarioEvent]
    /// Per event: answered (calls), sent (signals), made (incoming).
    private(set) var reached: [Bool]
    private(set) var divergences: [String] = []
    /// Per non-free call index: the signals and incoming calls that hang on it, in order.
    let followers: [Int: [Int]]
    /// Signals and incoming calls before the first call.
    let initial: [Int]

    init(events: [ScenarioEvent]) {
        self.events = events
        reached = Array(repeating: false, count: events.count)
        var followers: [Int: [Int]] = [:]
        var initial: [Int] = []
        var anchor: Int?
        for (i, e) in events.enumerated() {
            switch e {
            case .call(_, let m, _, _):
                if !Self.isFree(m) { anchor = i }
            case .signal, .incoming:
                if let anchor { followers[anchor, default: []].append(i) } else { initial.append(i) }
            }
        }
        self.followers = followers
        self.initial = initial
        for (i, e) in events.enumerated() { if case .call(_, let m, _, _) = e, Self.isFree(m) { reached[i] = true } }
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
        /// Answer `outcome`; first send `before` (recorded before the reply), then `after` each
        /// at its delay after the reply.
        case answer(ScenarioOutcome, before: [Int], after: [(index: Int, delay: Duration)])
        /// The call is not the recording's: fail it with `message`.
        case diverged(String)
    }

    /// Matches `seen` against the recording and marks it answered.
    mutating func match(_ seen: ScenarioMessage) -> Match {
        guard let first = events.indices.first(where: { !reached[$0] && isCall($0) }) else {
            return diverge("replay diverged: the recording has no more calls of the app, seen \(seen)")
        }
        let window = events.indices.filter { i in
            guard i >= first, !reached[i], case .call(let at, _, _, _) = events[i] else { return false }
            return i == first || at <= replyTime(first)
        }
        guard let hit = window.first(where: { events[$0].message == seen }),
              case .call(_, _, let outcome, _) = events[hit] else {
            let expected = window.map { "\(events[$0].message)" }.joined(separator: " or ")
            return diverge("replay diverged at recorded call \(first + 1) of \(events.count) events: expected \(expected), seen \(seen)")
        }
        reached[hit] = true
        let reply = replyTime(hit)
        var before: [Int] = []
        var after: [(Int, Duration)] = []
        for f in followers[hit] ?? [] {
            let at = events[f].at
            if at < reply { before.append(f) } else { after.append((f, at - reply)) }
        }
        return .answer(outcome, before: before, after: after.map { (index: $0.0, delay: $0.1) })
    }

    /// Marks a signal sent or an incoming call made.
    mutating func markReached(_ index: Int) { reached[index] = true }

    /// Records a divergence found elsewhere (the app's answer to an incoming call).
    mutating func record(_ divergence: String) { divergences.append(divergence) }

    private mutating func diverge(_ message: String) -> Match {
        divergences.append(message)
        return .diverged(message)
    }

    private func isCall(_ i: Int) -> Bool { if case .call = events[i] { true } else { false } }

    private func replyTime(_ i: Int) -> Duration {
        if case .call(let at, _, _, let latency) = events[i] { at + latency } else { events[i].at }
    }

    // MARK: Report

    /// What of the recording was never reached, and every divergence.
    var report: ReplayReport {
        ReplayReport(divergences: divergences, unreached: events.indices.filter { !reached[$0] }.map { ($0 + 1, events[$0]) })
    }
}
