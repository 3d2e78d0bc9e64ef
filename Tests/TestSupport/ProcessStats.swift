// ProcessStats: this process's resident memory and open descriptors.
import Foundation

/// Figures about the running process, for leak and growth checks.
public enum ProcessStats {
    /// The resident set size in kB (`VmRSS` in /proc/self/status), 0 when unreadable.
    public static func residentKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The resident set size in kB after glibc's `malloc_trim(0)` has given back the free pages
    /// every arena keeps for reuse: what is left is memory in use (plus code, stacks and the
    /// allocator's bookkeeping), so unlike the raw RSS it tells a leak from the allocator's caches.
    /// The raw RSS when `malloc_trim` is not there (another libc, or a sanitizer's allocator).
    public static func trimmedResidentKB() -> Int {
        if let trim = mallocTrim { _ = trim(0) }
        return residentKB()
    }

    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard !Sanitizers.address, let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// The number of open file descriptors (entries in /proc/self/fd).
    public static func openFDs() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }
}
