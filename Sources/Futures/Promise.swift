// MARK: - Promise

/// The write side of a ``Future``: completes it once with a value or an error.
///
/// Completing twice is allowed and is a no-op: every completing method returns `false` when
/// the future was already completed, and never traps, so racing completers (a reply against a
/// timeout, say) need no coordination.
///
/// A promise deinitialised without being completed leaves its future pending forever; in DEBUG
/// builds (or with `BLUECAP_LOG=debug`) that prints a one-line warning on standard error.
public final class Promise<T: Sendable>: Sendable {
    /// The future this promise completes.
    public let future: Future<T>

    /// Creates a promise with a pending future.
    @inlinable
    public init() {
        future = Future()
    }

    deinit {
        // A debugging aid (see FuturesDiagnostics): off in release builds unless BLUECAP_LOG=debug.
        if FuturesDiagnostics.warnsOnUncompletedPromise, !future.isCompleted {
            FuturesDiagnostics.reportUncompletedPromise(of: T.self)
        }
    }

    /// Whether the future is completed.
    @inlinable
    public var isCompleted: Bool { future.isCompleted }

    /// Completes the future with `value`. Returns `false` (and does nothing) if already completed.
    @inlinable
    @discardableResult
    public func success(_ value: T) -> Bool {
        future.complete(.success(value))
    }

    /// Completes the future with `error`. Returns `false` (and does nothing) if already completed.
    @inlinable
    @discardableResult
    public func failure(_ error: any Error) -> Bool {
        future.complete(.failure(error))
    }

    /// Completes the future with `result`. Returns `false` (and does nothing) if already completed.
    @inlinable
    @discardableResult
    public func complete(_ result: Result<T, any Error>) -> Bool {
        future.complete(result)
    }

    /// Completes the future with the result of `other` once `other` completes.
    @inlinable
    public func completeWith(context: any ExecutionContext = .immediate, future other: Future<T>) {
        other.onComplete(context: context) { [self] result in
            self.future.complete(result)
        }
    }
}
