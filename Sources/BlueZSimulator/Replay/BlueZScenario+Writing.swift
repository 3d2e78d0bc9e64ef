// BlueZScenario+Writing: the scenario as the text of its file.
import DBus
import Foundation

// MARK: - Writing

extension BlueZScenario {
    /// The file's text: the header, one line per object (sorted by path), one line per event.
    /// ``init(text:)`` reads it back equal.
    public var text: String {
        var lines = [Self.json(["bluez-scenario": Self.formatVersion, "note": note])]
        for path in objects.keys.sorted() {
            let interfaces = (objects[path] ?? [:]).mapValues { $0.mapValues { ScenarioValueCoding.encode(.variant($0)) } }
            lines.append("{\"object\":\(Self.json(path)),\"interfaces\":\(Self.json(interfaces))}")
        }
        lines.append(contentsOf: events.map(Self.line))
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes ``text`` to `url` (atomically).
    public func write(to url: URL) throws {
        try Data(text.utf8).write(to: url, options: .atomic)
    }

    /// One event's line.
    static func line(_ event: ScenarioEvent) -> String {
        let t = "{\"t\":\(micros(event.at))"
        switch event {
        case .signal(_, let m): return "\(t),\"signal\":\(message(m))}"
        case .call(_, let m, let o, let latency): return "\(t),\"call\":\(message(m))\(outcome(o)),\"latency\":\(micros(latency))}"
        case .incoming(_, let m, let o): return "\(t),\"incoming\":\(message(m))\(outcome(o))}"
        }
    }

    private static func micros(_ d: Duration) -> Int64 {
        d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
    }

    private static func message(_ m: ScenarioMessage) -> String {
        "{\"path\":\(json(m.path)),\"interface\":\(json(m.interface)),\"member\":\(json(m.member)),\"args\":\(json(ScenarioValueCoding.encodeArguments(m.arguments)))}"
    }

    private static func outcome(_ o: ScenarioOutcome) -> String {
        switch o {
        case .reply(let values): ",\"reply\":\(json(ScenarioValueCoding.encodeArguments(values)))"
        case .error(let name, let message): ",\"error\":\(json(["name": name, "message": message]))"
        case .none: ""
        }
    }

    static func json(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]) else {
            return "null"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
