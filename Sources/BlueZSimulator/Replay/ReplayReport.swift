// ReplayReport: what a replay did not reach, and where the app left the recording.

// MARK: - ReplayReport

/// The outcome of a replay (``BlueZReplayer/report``): the divergences (calls of the app that
/// were not the recording's, answers of the app that differ from the recorded ones) and the
/// events of the recording never reached (calls the app did not make, signals not yet sent,
/// BlueZ's calls into the app not yet made). An app that did all the recording did has neither.
public struct ReplayReport: Sendable, Equatable, CustomStringConvertible {
    /// Each divergence, naming the call expected and the call seen.
    public let divergences: [String]
    /// The events never reached, with their 1-based position among the recording's events.
    package let unreached: [(position: Int, event: ScenarioEvent)]

    /// A report of `divergences` and `unreached` events.
    package init(divergences: [String], unreached: [(position: Int, event: ScenarioEvent)]) {
        self.divergences = divergences
        self.unreached = unreached
    }

    /// The 1-based positions, among the recording's events, of those never reached.
    public var unreachedPositions: [Int] { unreached.map(\.position) }

    /// True when the app followed the whole recording and nothing diverged.
    public var isComplete: Bool { divergences.isEmpty && unreached.isEmpty }

    /// One line per divergence, then one per unreached event ("event 12 (call): /org/bluez/… org.bluez.Device1.Disconnect()").
    public var description: String {
        if isComplete { return "replay complete: every recorded event reached, no divergence" }
        var lines = divergences
        for (position, event) in unreached {
            let kind = switch event {
            case .call: "call of the app never made"
            case .signal: "signal never sent"
            case .incoming: "call into the app never made"
            }
            lines.append("event \(position) (\(kind)): \(event.message)")
        }
        return lines.joined(separator: "\n")
    }

    /// Equal when the same divergences and the same unreached positions.
    public static func == (a: ReplayReport, b: ReplayReport) -> Bool {
        a.divergences == b.divergences && a.unreached.map(\.position) == b.unreached.map(\.position)
    }
}
