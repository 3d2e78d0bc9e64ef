// MARK: - FuturesError

/// Errors produced by the futures library itself.
public enum FuturesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `timeout(after:)` fired: the future was still pending, or the stream produced no result,
    /// when the interval it carries had passed.
    case timeout(after: Duration)
    /// `withFilter` rejected the value, or `first()` found a stream that finished empty.
    case noSuchElement

    /// A readable description naming the cause.
    public var description: String {
        switch self {
        case .timeout(let after): return "timed out after \(after.secondsDescription): nothing arrived within that time"
        case .noSuchElement: return "no such element"
        }
    }
}

extension Duration {
    /// "2 s", "0.5 s": the duration in seconds, as error messages give it.
    var secondsDescription: String {
        let (seconds, attoseconds) = components
        guard attoseconds != 0 else { return "\(seconds) s" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) s"
    }
}
