// MARK: - Promise

/// The write side of a ``Future``: completes it once with a value or an error.
///
/// Completing twice is allowed and is a no-op: every completing method returns `false` when
/// the future was already completed, and never traps, so racing completers (a reply against a
/// timeout, say) need no coordination.
///
/// **Abandonment.** A consumer that stops waiting (a callback whose ``CancelToken`` is
/// cancelled, a `timeout(after:)` that fired, an `await` whose task was cancelled, a derived
/// future whose own consumers all gave up) removes its callback. When a pending future had at
/// least one callback and every one of them has been removed that way, nobody can ever receive
/// its result: the future is *abandoned*, and the ``onAbandoned(_:)`` handlers run, once. A
/// producer uses that to stop the work behind the future. Callbacks registered without a token
/// (`onSuccess { … }`) keep their interest for good; abandonment is final (a callback added
/// later does not undo it).
///
/// Abandonment travels up through every combinator to the futures it waits for, each of which
/// is then abandoned in turn if nothing else waits for it: `map`, `flatMap` (and the future
/// its closure returned), `recover`, `recoverWith`, `withFilter`, `andThen`, `timeout`,
/// ``completeWith(context:future:)``, `zip` (both futures), `fold`, `sequence` and `traverse`
/// (every element still pending), and `retry` (the attempt still pending; a retry waiting for
/// its delay is cancelled and no further attempt starts). Only abandonment removes those
/// callbacks: when `zip`, `fold` or `sequence` fails early, its callbacks on the futures still
/// pending stay until those complete (so failing does not abandon them).
///
/// A promise deinitialised without being completed leaves its future pending forever, and
/// releases the callbacks waiting on it (nothing can run them any more, and they own the
/// promises of the futures derived from it, which go the same way); in DEBUG builds (or with
/// `BLUECAP_LOG=debug`) that prints a one-line warning on standard error, unless the future was
/// abandoned.
public final class Promise<T: Sendable>: Sendable {
    /// The future this promise completes.
    public let future: Future<T>

    /// Creates a promise with a pending future.
    @inlinable
    public init() {
        future = Future()
    }

    /// A promise whose future waits for `upstream` (see ``Future/derive(context:token:_:)``).
    @inlinable
    init(waitingFor upstream: any UpstreamFuture) {
        future = Future(upstream: upstream)
    }

    deinit {
        // A debugging aid (see FuturesDiagnostics): off in release builds unless BLUECAP_LOG=debug.
        // An abandoned future is left pending on purpose: nobody waits for it.
        if FuturesDiagnostics.warnsOnUncompletedPromise, !future.isCompleted, !future.isAbandoned {
            FuturesDiagnostics.reportUncompletedPromise(of: T.self)
        }
        // Nobody can complete the future now: its callbacks can never run. Releasing them (and
        // its upstreams) breaks the cycles a pending chain makes (see UpstreamFuture).
        if future.mayHaveCallbacks.load(ordering: .relaxed) { future.dropReferences() }
    }

    /// Whether the future is completed.
    @inlinable
    public var isCompleted: Bool { future.isCompleted }

    /// Whether the future was abandoned (see ``onAbandoned(_:)``).
    public var isAbandoned: Bool { future.isAbandoned }

    /// Calls `handler` once when the future is abandoned: it is still pending, had at least one
    /// callback, and every callback has since been cancelled (its cancel token, a `timeout` that
    /// fired, a cancelled `await`, or a derived future abandoned in turn). Runs at once if the
    /// future already is abandoned; never runs if the future completes first (the handler is
    /// then released). `handler` runs on the thread that removed the last callback, after the
    /// code running there on ``ImmediateContext`` returns, with no lock held.
    ///
    /// Use it to stop the work that would complete the future (an operation nobody waits for).
    public func onAbandoned(_ handler: @escaping @Sendable () -> Void) {
        future.onAbandoned(handler)
    }

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

    /// Completes the future with the result of `other` once `other` completes. If this
    /// promise's future is abandoned first, its callback on `other` is removed (which may
    /// abandon `other` in turn).
    @inlinable
    public func completeWith(context: any ExecutionContext = .immediate, future other: Future<T>) {
        other.addCallback(for: future, context: context, token: nil) { [self] result in
            self.future.complete(result)
        }
    }
}
