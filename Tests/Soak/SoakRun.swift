// SoakRun: RSS and fd samples from /proc/self and the pass/fail bounds.
import Foundation

/// True in an AddressSanitizer build, which keeps freed memory in quarantine: RSS is not bounded.
let underAddressSanitizer: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

struct SoakRun {
    struct Sample {
        var at: Int
        var rssKB: Int
        var fds: Int
        var extra: String
    }

    var name: String
    var unit: String
    var samples: [Sample] = []
    var elapsed: Duration = .zero

    /// Allowed growth from the warm-up sample (the second one) to the end.
    static let rssGrowthKB = 16 * 1024
    static let fdGrowth = 8

    mutating func sample(at: Int, extra: String = "") {
        samples.append(Sample(at: at, rssKB: Self.residentKB(), fds: Self.openFDs(), extra: extra))
    }

    /// Prints the table; true when RSS and fds stayed within bounds.
    func report() -> Bool {
        print("\n\(name) — \(String(format: "%.1f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)) s")
        print("  \(unit.padding(toLength: 8, withPad: " ", startingAt: 0))  RSS (MB)   fds   ")
        for s in samples {
            print(String(format: "  %-8d  %8.1f  %5d   %@", s.at, Double(s.rssKB) / 1024, s.fds, s.extra))
        }
        guard samples.count >= 2, let end = samples.last else { return true }
        let base = samples[1]  // after warm-up
        let rss = end.rssKB - base.rssKB, fds = end.fds - base.fds
        let ok = (underAddressSanitizer || rss <= Self.rssGrowthKB) && fds <= Self.fdGrowth
        let note = underAddressSanitizer ? " (RSS not bounded under AddressSanitizer: freed memory is quarantined)" : ""
        print("  growth after warm-up: RSS \(rss / 1024) MB, fds \(fds) — \(ok ? "flat" : "GROWING")\(note)")
        return ok
    }

    /// VmRSS from /proc/self/status, in kB.
    static func residentKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// Entries in /proc/self/fd.
    static func openFDs() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
}
