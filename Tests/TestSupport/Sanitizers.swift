import Glibc

// MARK: - Sanitizer detection

/// What the test process runs under, read from the sanitizer runtimes' entry points.
///
/// Sanitized builds run several times slower (ThreadSanitizer about 5–15×, AddressSanitizer about
/// 2×). No test scales a deadline by that: deadlines run on a manual clock, or a wait ends on a
/// count with a fixed bound that only guards against a hang. These flags serve what a sanitizer
/// changes besides speed: the CPU load that reaches a given pressure, and memory that
/// AddressSanitizer quarantines instead of freeing. Correctness checks (counts, order, error
/// kinds) are never relaxed.
public enum Sanitizers {
    /// True when ThreadSanitizer's runtime is linked in.
    public static let thread: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
    /// True when AddressSanitizer's runtime is linked in.
    public static let address: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
}
