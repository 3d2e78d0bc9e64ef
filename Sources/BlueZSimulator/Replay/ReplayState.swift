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
    /// Recorded unordered calls already used for an answer.
    private var usedUnordered: Set<Int> = []
    /// How many unanswered calls after the first a call may match.
    let lookahead: Int
    /// Per event: a call the app made while another of its calls was in flight. Its place
    /// among the events is not fixed (it raced), so the replay does not wait for it there, and
    /// an app that does not make it (it stopped discovery once, not twice) is not stalled.
    let racing: [Bool]

    /// Calls (`interface.member`) the app may make any number of times anywhere (see
    /// ``BlueZReplayer/defaultUnordered``): never awaited, never divergent, never unreached.
    let unordered: Set<String>

    init(events: [ScenarioEvent], lookahead: Int = 4, unordered: Set<String> = []) {
        self.events = events
        self.lookahead = lookahead
        self.unordered = unordered
        reached = Array(repeating: false, count: events.count)
        var racing = Array(repeating: false, count: events.count)
        var inFlightUntil: Duration?
        for (i, e) in events.enumerated() {
            guard case .call(let at, let m, _, let latency) = e, !Self.isFree(m) else { continue }
            if let until = inFlightUntil, at < until { racing[i] = true }
            if unordered.contains("\(m.interface).\(m.member)") { racing[i] = true; continue }
            inFlightUntil = max(inFlightUntil ?? .zero, at + latency)
        }
        self.racing = racing
        for (i, e) in events.enumerated() {
            if case .call(_, let m, _, _) = e, Self.isFree(m) || unordered.contains("\(m.interface).\(m.member)") { reached[i] = true }
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
        if unordered.contains("\(seen.interface).\(seen.member)") {
            // The next recorded answer to the same call, else the last, else success.
            let same = events.indices.filter { events[$0].isCall && events[$0].message == seen }
            let pick = same.first { !usedUnordered.contains($0) } ?? same.last
            if let pick { usedUnordered.insert(pick) }
            if let pick, case .call(_, _, let outcome, _) = events[pick] { return .unordered(outcome) }
            return .unordered(.reply([]))
        }
        guard let first = events.indices.first(where: { !reached[$0] && isCall($0) }) else {
            return diverge("replay diverged: the recording has no more calls of the app, seen \(seen)")
        }
        var ahead = 0
        let window = events.indices.filter { i in
            guard i >= first, !reached[i], case .call(let at, _, _, _) = events[i] else { return false }
            ahead += 1
            return ahead <= lookahead + 1 || at <= replyTime(first)
        }
        guard let hit = window.first(where: { events[$0].message == seen }),
              case .call(_, _, let outcome, _) = events[hit] else {
            return diverge("replay diverged at recorded call \(first + 1) of \(events.count) events: expected \(events[first].message), seen \(seen)")
        }
        reached[hit] = true
        return .matched(index: hit, outcome: outcome, inOrder: hit == first && !racing[hit])
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
        ReplayReport(divergences: divergences, unreached: events.indices.filter { !reached[$0] }.map { ($0 + 1, events[$0]) })
    }
}
