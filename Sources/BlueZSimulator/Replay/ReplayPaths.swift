// ReplayPaths: the app's own object paths of a recording matched to this run's.
import DBus

// MARK: - ReplayPaths

/// The app's own object paths (its GATT application, advertisement, agent) differ from run to
/// run: they carry its process id and a counter (`/org/bluecap/peripheral4242_0`). A recorded
/// path outside `/org/bluez` matches a seen one of the same shape (the same text with every
/// run of digits taken as one wildcard); the first match pairs them, and from then on the
/// recorded path and every path below it stand for the seen one and the same paths below it,
/// also in the calls the replay makes into the app. bluetoothd's paths (`/org/bluez/…`) match
/// only exactly.
struct ReplayPaths {
    /// Recorded path → seen path, learned from matched calls.
    private(set) var aliases: [String: String] = [:]

    /// Whether `recorded` and `seen` are the same call: interface, member, path and arguments,
    /// object paths compared as described above.
    func same(_ recorded: ScenarioMessage, _ seen: ScenarioMessage) -> Bool {
        guard recorded.interface == seen.interface, recorded.member == seen.member,
              recorded.arguments.count == seen.arguments.count, samePath(recorded.path, seen.path) else { return false }
        return zip(recorded.arguments, seen.arguments).allSatisfy { same($0, $1) }
    }

    /// Whether the app's answer `seen` to a call into it is the recorded one, object paths
    /// compared as described above (the objects a GATT application lists carry its paths).
    func same(_ recorded: ScenarioOutcome, _ seen: ScenarioOutcome) -> Bool {
        guard case .reply(let r) = recorded, case .reply(let s) = seen else { return recorded == seen }
        return r.count == s.count && zip(r, s).allSatisfy { same($0, $1) }
    }

    /// Values compared with object paths as described above; dictionary entries in any order.
    func same(_ recorded: DBusValue, _ seen: DBusValue) -> Bool {
        switch (recorded, seen) {
        case (.objectPath(let r), .objectPath(let s)):
            return samePath(r.rawValue, s.rawValue)
        case (.variant(let r), .variant(let s)):
            return same(r, s)
        case (.array(let re, let r), .array(let se, let s)):
            return re == se && r.count == s.count && zip(r, s).allSatisfy { same($0, $1) }
        case (.struct(let r), .struct(let s)):
            return r.count == s.count && zip(r, s).allSatisfy { same($0, $1) }
        case (.dict(let rk, let rv, let r), .dict(let sk, let sv, let s)):
            guard rk == sk, rv == sv, r.count == s.count else { return false }
            var unmatched = s
            for entry in r {
                guard let i = unmatched.firstIndex(where: { same(entry.key, $0.key) && same(entry.value, $0.value) }) else { return false }
                unmatched.remove(at: i)
            }
            return true
        default:
            return recorded == seen
        }
    }

    /// Pairs the app paths of a matched call (its path and object-path arguments) not paired yet.
    mutating func learn(_ recorded: ScenarioMessage, _ seen: ScenarioMessage) {
        pair(recorded.path, seen.path)
        for (r, s) in zip(recorded.arguments, seen.arguments) {
            if case .objectPath(let rp) = r, case .objectPath(let sp) = s { pair(rp.rawValue, sp.rawValue) }
        }
    }

    /// The path of this run that a recorded path stands for (itself when not paired).
    func seen(forRecorded path: String) -> String { mapped(path) ?? path }

    // MARK: Comparing

    private func samePath(_ recorded: String, _ seen: String) -> Bool {
        if recorded == seen { return true }
        guard Self.isApps(recorded), Self.isApps(seen) else { return false }
        if let mapped = mapped(recorded) { return mapped == seen }
        return Self.shape(recorded) == Self.shape(seen)
    }

    private mutating func pair(_ recorded: String, _ seen: String) {
        guard recorded != seen, Self.isApps(recorded), mapped(recorded) == nil else { return }
        aliases[recorded] = seen
    }

    /// `path` through the longest paired prefix, or nil.
    private func mapped(_ path: String) -> String? {
        var best: (recorded: String, seen: String)?
        for (r, s) in aliases where path == r || path.hasPrefix(r + "/") {
            if best == nil || r.count > best!.recorded.count { best = (r, s) }
        }
        guard let best else { return nil }
        return best.seen + path.dropFirst(best.recorded.count)
    }

    /// An object of the app (not bluetoothd's, not the root).
    private static func isApps(_ path: String) -> Bool { path != "/" && !path.hasPrefix("/org/bluez") }

    /// `path` with every run of digits as one `#`.
    private static func shape(_ path: String) -> String {
        var out = ""
        var inDigits = false
        for c in path {
            if c.isASCII && c.isNumber {
                if !inDigits { out.append("#") }
                inDigits = true
            } else {
                out.append(c)
                inDigits = false
            }
        }
        return out
    }
}
