import Glibc

// MARK: - Sanitizer-aware timing

/// What the test process runs under, read from the sanitizer runtimes' entry points.
///
/// Sanitized builds run several times slower (ThreadSanitizer about 5–15×, AddressSanitizer about
/// 2×). Tests that bound a duration, or wait for a stream of timed events, scale their bounds by
/// `slowdown` so that `make tsan` / `make asan` report races and memory errors, not slowness.
/// Correctness checks (counts, order, error kinds) are never relaxed.
public enum Sanitizers {
    /// True when ThreadSanitizer's runtime is linked in.
    public static let thread: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
    /// True when AddressSanitizer's runtime is linked in.
    public static let address: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

    /// The factor to apply to a timing bound: 4 under ThreadSanitizer, 2 under AddressSanitizer, else 1.
    public static let slowdown: Int = thread ? 4 : (address ? 2 : 1)

    /// `bound` scaled by `slowdown`.
    public static func scaled(_ bound: Duration) -> Duration { bound * slowdown }
}
