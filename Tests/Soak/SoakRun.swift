// SoakRun: RSS and fd samples from /proc/self and the pass/fail bounds.
import Foundation
import TestSupport

/// True in an AddressSanitizer build, which keeps freed memory in quarantine: RSS is not bounded.
let underAddressSanitizer = ProcessStats.underAddressSanitizer

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
        samples.append(Sample(at: at, rssKB: ProcessStats.residentKB(), fds: ProcessStats.openFDs(), extra: extra))
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
}
