// SystemState: what this machine's files say about Bluetooth — rfkill switches and the bluez
// package's version.
import Foundation

// MARK: - SystemState

/// Reads the machine's files the doctor looks at; every read is a plain file read.
enum SystemState {
    /// One rfkill switch of type `bluetooth`.
    struct RfkillSwitch: Equatable {
        var id: String
        var name: String
        var soft: Bool
        var hard: Bool
    }

    /// The bluetooth switches under `root` (`/sys/class/rfkill`); nil when `root` does not exist.
    static func rfkill(root: String) -> [RfkillSwitch]? {
        let fm = FileManager.default
        guard let entries = try? fm.contentsOfDirectory(atPath: root) else { return nil }
        func read(_ dir: String, _ file: String) -> String? {
            guard let data = fm.contents(atPath: "\(root)/\(dir)/\(file)") else { return nil }
            return String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return entries.sorted().compactMap { dir in
            guard read(dir, "type") == "bluetooth" else { return nil }
            return RfkillSwitch(id: dir, name: read(dir, "name") ?? dir, soft: read(dir, "soft") == "1", hard: read(dir, "hard") == "1")
        }
    }

    /// The installed version of the `bluez` package in dpkg's database at `path`
    /// (`/var/lib/dpkg/status`, what `dpkg-query -W bluez` reads); nil when unknown.
    static func packageVersion(database path: String, package: String = "bluez") -> String? {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return nil }
        for stanza in text.components(separatedBy: "\n\n") {
            var name: String?, version: String?, installed = false
            for line in stanza.split(separator: "\n") {
                if line.hasPrefix("Package: ") { name = String(line.dropFirst(9)) }
                if line.hasPrefix("Version: ") { version = String(line.dropFirst(9)) }
                if line.hasPrefix("Status: "), line.hasSuffix(" installed") { installed = true }
            }
            if name == package, installed, let version { return version }
        }
        return nil
    }
}
