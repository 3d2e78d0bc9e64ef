// AddressAnonymizer: Bluetooth addresses replaced consistently in a recording.
import DBus
import Foundation

// MARK: - AddressAnonymizer

/// Replaces every Bluetooth address (`C0:FF:EE:00:00:01` in strings, `dev_C0_FF_EE_00_00_01` in
/// object paths and strings) by a made-up one, the same address always by the same replacement
/// (`02:00:00:00:00:01`, `02:00:00:00:00:02`… in order of appearance: locally administered, so
/// never a real device's), so a recording keeps its meaning without naming anyone's devices.
package struct AddressAnonymizer: Sendable {
    private var replacements: [String: String] = [:]
    // Six pairs of hex digits joined by ':' or '_' (the same separator throughout).
    private static let pattern = try! NSRegularExpression(
        pattern: "(?<![0-9A-Fa-f])[0-9A-Fa-f]{2}([:_])[0-9A-Fa-f]{2}(?:\\1[0-9A-Fa-f]{2}){4}(?![0-9A-Fa-f])")

    /// An anonymizer that has replaced nothing yet.
    package init() {}

    /// How many distinct addresses were replaced.
    package var count: Int { replacements.count }

    /// `text` with every address replaced.
    package mutating func text(_ text: String) -> String {
        let ns = text as NSString
        let matches = Self.pattern.matches(in: text, range: NSRange(location: 0, length: ns.length))
        guard !matches.isEmpty else { return text }
        var out = ""
        var last = 0
        for m in matches {
            out += ns.substring(with: NSRange(location: last, length: m.range.location - last))
            let found = ns.substring(with: m.range)
            let separator = found.contains("_") ? "_" : ":"
            let key = found.uppercased().replacingOccurrences(of: "_", with: ":")
            let replacement = replacements[key] ?? {
                let n = replacements.count + 1
                let made = String(format: "02:00:00:00:%02X:%02X", (n >> 8) & 0xFF, n & 0xFF)
                replacements[key] = made
                return made
            }()
            out += separator == "_" ? replacement.replacingOccurrences(of: ":", with: "_") : replacement
            last = m.range.location + m.range.length
        }
        return out + ns.substring(from: last)
    }

    /// `value` with every address in its strings and object paths replaced.
    package mutating func value(_ value: DBusValue) -> DBusValue {
        switch value {
        case .string(let s): return .string(text(s))
        case .objectPath(let p): return (try? ObjectPath(text(p.rawValue))).map { .objectPath($0) } ?? value
        case .array(let e, let items): return .array(element: e, items.map { self.value($0) })
        case .dict(let k, let v, let entries): return .dict(key: k, value: v, entries.map { .init(self.value($0.key), self.value($0.value)) })
        case .struct(let fields): return .struct(fields.map { self.value($0) })
        case .variant(let inner): return .variant(self.value(inner))
        default: return value
        }
    }

    /// `message` with its path and arguments anonymized.
    package mutating func message(_ message: ScenarioMessage) -> ScenarioMessage {
        ScenarioMessage(path: text(message.path), interface: message.interface, member: message.member,
                        arguments: message.arguments.map { value($0) })
    }
}
