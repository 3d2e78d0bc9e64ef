// PathWorkProbe: counts the work done with object paths on one thread, for tests that check that
// the work per event does not grow with the number of objects.
import Glibc
import Synchronization

/// Counts, on one chosen thread, every hash, comparison and ancestry check of an ``ObjectPath``
/// (each dictionary or set lookup by path hashes the key once and compares it with the entries it
/// probes; a linear search compares it with every entry) and every observer a library component
/// visits for an event (``visit()``).
///
/// Off (no thread chosen) it costs one relaxed atomic load per path hash or comparison. A test
/// chooses the thread that dispatches the events under test (the connection's owner thread, from
/// a callback running on it) with ``countOnCurrentThread()``, lets the events run, and reads the
/// counts with ``stop()``: work on every other thread (parallel tests, the simulator) is not
/// counted.
///
/// A test probe, not API: reached with `@_spi(Testing) import DBus`.
@_spi(Testing)
public enum PathWorkProbe {
    /// What was counted.
    public struct Counts: Sendable, Equatable, CustomStringConvertible {
        /// `ObjectPath.hash(into:)` calls: one per dictionary or set lookup by path.
        public var hashes = 0
        /// `ObjectPath` `==` and `isDescendant(of:)` calls.
        public var comparisons = 0
        /// Observers and route handlers called.
        public var visits = 0

        /// The counts in words.
        public var description: String { "\(hashes) path hashes, \(comparisons) path comparisons, \(visits) observer visits" }
    }

    /// The counting thread (`pthread_self()`), 0 when off.
    private static let thread = Atomic<UInt>(0)
    private static let hashes = Atomic<Int>(0)
    private static let comparisons = Atomic<Int>(0)
    private static let visits = Atomic<Int>(0)

    /// Starts counting (from zero) on the calling thread.
    public static func countOnCurrentThread() {
        hashes.store(0, ordering: .relaxed)
        comparisons.store(0, ordering: .relaxed)
        visits.store(0, ordering: .relaxed)
        thread.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// Stops counting; returns the counts since ``countOnCurrentThread()``.
    @discardableResult
    public static func stop() -> Counts {
        thread.store(0, ordering: .releasing)
        return Counts(hashes: hashes.load(ordering: .acquiring), comparisons: comparisons.load(ordering: .acquiring),
                      visits: visits.load(ordering: .acquiring))
    }

    @inline(__always) private static var onCountingThread: Bool {
        let t = thread.load(ordering: .relaxed)
        return t != 0 && t == UInt(pthread_self())
    }

    @inline(__always) static func hashed() {
        if onCountingThread { hashes.wrappingAdd(1, ordering: .relaxed) }
    }

    @inline(__always) static func compared() {
        if onCountingThread { comparisons.wrappingAdd(1, ordering: .relaxed) }
    }

    /// One observer or route handler called for an event.
    @inline(__always) public static func visit() {
        if onCountingThread { visits.wrappingAdd(1, ordering: .relaxed) }
    }
}
