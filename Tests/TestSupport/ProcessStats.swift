// ProcessStats: this process's resident memory and open descriptors, from /proc/self.
import Foundation

/// Figures about the running process, for leak and growth checks.
public enum ProcessStats {
    /// True in an AddressSanitizer build, which keeps freed memory in quarantine: RSS bounds are moot.
    public static let underAddressSanitizer: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

    /// The resident set size in kB (`VmRSS` in /proc/self/status), 0 when unreadable.
    public static func residentKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The number of open file descriptors (entries in /proc/self/fd).
    public static func openFDs() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }
}
