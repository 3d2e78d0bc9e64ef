// SoakRun: RSS (raw, and after malloc_trim), fd samples and the pass/fail bounds.
import Foundation
import TestSupport

struct SoakRun {
    struct Sample {
        var at: Int
        var rssKB: Int
        var trimmedKB: Int
        var fds: Int
        var extra: String
    }

    var name: String
    var unit: String
    var samples: [Sample] = []
    var elapsed: Duration = .zero

    /// Allowed growth from the warm-up sample (the second one) to the end. RSS also moves with
    /// the allocator's own caches (per-thread arenas fill up, freed pages are kept for reuse);
    /// RSS after `malloc_trim` does not, so its bound is the tight one.
    static let rssGrowthKB = 8 * 1024
    static let trimmedGrowthKB = 2 * 1024
    static let fdGrowth = 8

    mutating func sample(at: Int, extra: String = "") {
        samples.append(Sample(at: at, rssKB: ProcessStats.residentKB(), trimmedKB: ProcessStats.trimmedResidentKB(),
                              fds: ProcessStats.openFDs(), extra: extra))
    }

    /// Prints the table; true when RSS and fds stayed within bounds.
    func report() -> Bool {
        print("\n\(name) — \(String(format: "%.1f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)) s")
        print("  \(unit.padding(toLength: 8, withPad: " ", startingAt: 0))  RSS (MB)  trimmed (MB)   fds   ")
        for s in samples {
            print(String(format: "  %-8d  %8.1f  %12.1f  %5d   %@", s.at, Double(s.rssKB) / 1024, Double(s.trimmedKB) / 1024, s.fds, s.extra))
        }
        guard samples.count >= 2, let end = samples.last else { return true }
        let base = samples[1]  // after warm-up
        let rss = end.rssKB - base.rssKB, trimmed = end.trimmedKB - base.trimmedKB, fds = end.fds - base.fds
        let memoryOK = Sanitizers.address || (rss <= Self.rssGrowthKB && trimmed <= Self.trimmedGrowthKB)
        let ok = memoryOK && fds <= Self.fdGrowth
        let note = Sanitizers.address ? " (memory not bounded under AddressSanitizer: freed memory is quarantined)" : ""
        print(String(format: "  growth after warm-up: RSS %.1f MB, trimmed RSS %.1f MB, fds %d — %@%@",
                     Double(rss) / 1024, Double(trimmed) / 1024, fds, ok ? "flat" : "GROWING", note))
        return ok
    }
}
