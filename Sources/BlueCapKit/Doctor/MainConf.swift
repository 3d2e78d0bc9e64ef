// MainConf: the settings of bluetoothd's main.conf that change what the library sees.
import Foundation

// MARK: - MainConf

/// `/etc/bluetooth/main.conf` read as INI: `[Section]` headers, `Key = Value` lines, `#` and `;`
/// comments. Only uncommented settings are kept; bluetoothd's defaults apply to the rest.
struct MainConf: Equatable {
    /// Values by section, then key (as written, trimmed).
    var sections: [String: [String: String]] = [:]

    /// Parses INI text. Lines that are neither a header, a comment nor `key = value` are ignored.
    init(parsing text: String) {
        var section = ""
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { continue }
            sections[section, default: [:]][key] = value
        }
    }

    /// The file at `path` parsed; nil when it cannot be read (absent or not readable).
    static func read(_ path: String) -> MainConf? {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return nil }
        return MainConf(parsing: text)
    }

    /// The value of `key` in `section`.
    func value(_ section: String, _ key: String) -> String? { sections[section]?[key] }

    /// A boolean as GLib's key file reads it (`true`/`false`, also `yes`/`no`, `1`/`0`).
    func bool(_ section: String, _ key: String) -> Bool? {
        switch value(section, key)?.lowercased() {
        case "true", "yes", "1": return true
        case "false", "no", "0": return false
        default: return nil
        }
    }

    // MARK: What matters to the library

    /// `[General] Experimental`: bluetoothd exports its experimental interfaces.
    var experimental: Bool? { bool("General", "Experimental") }
    /// `[GATT] Cache` (`always`, `yes`, `no`): whether GATT databases are kept across connections.
    var cache: String? { value("GATT", "Cache") }
    /// `[General] JustWorksRepairing` (`never`, `confirm`, `always`).
    var justWorksRepairing: String? { value("General", "JustWorksRepairing") }
    /// `[General] ControllerMode` (`dual`, `bredr`, `le`).
    var controllerMode: String? { value("General", "ControllerMode") }
    /// `[GATT] Channels` (1…5; more than 1 enables EATT).
    var gattChannels: String? { value("GATT", "Channels") }
}
