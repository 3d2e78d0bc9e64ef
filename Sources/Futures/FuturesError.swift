// MARK: - FuturesError

/// Errors produced by the futures library itself.
public enum FuturesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `timeout(after:)` fired before the future completed; carries the timeout that fired.
    case timeout(after: Duration)
    /// `withFilter` rejected the value, or `first()` found a stream that finished empty.
    case noSuchElement

    /// A readable description naming the cause.
    public var description: String {
        switch self {
        case .timeout(let after): return "future timed out after \(after)"
        case .noSuchElement: return "no such element"
        }
    }
}
