// SampleCounter: numbers samples up to an optional limit.


/// Counts samples up to an optional limit (later ones are dropped).
package final class SampleCounter: Sendable {
    private let count = Guarded(0)
    package let limit: Int?
    package init(limit: Int?) { self.limit = limit }

    /// The sample's number (1, 2, …), or 0 past the limit.
    package func next() -> Int {
        count.withLock { c in
            if let limit, c >= limit { return 0 }
            c += 1
            return c
        }
    }
}
