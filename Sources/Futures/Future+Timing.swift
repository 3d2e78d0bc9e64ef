// MARK: - Timeouts and retries

extension Future {
    /// A future with this future's result, or failing with ``FuturesError/timeout(after:)`` if
    /// this future is still pending after `delay`. If this future completes first, the timer is
    /// cancelled at once (it does not hold the promise until the deadline).
    /// - Parameters:
    ///   - delay: how long to wait for this future.
    ///   - context: supplies the timer; pass a ``ManualContext`` for virtual time.
    public func timeout(
        after delay: Duration,
        context: any ExecutionContext = .futuresDefault
    ) -> Future<T> {
        let promise = Promise<T>()
        let timer = context.schedule(after: delay) {
            promise.failure(FuturesError.timeout(after: delay))
        }
        onComplete(context: .immediate) { result in
            // Completed first: unschedule the timer so it stops holding the promise.
            timer.cancel()
            promise.complete(result)
        }
        return promise.future
    }

    /// Runs `attempt` and, while the future it returns fails with an error `when` accepts and
    /// retries remain, runs it again after `delay`.
    ///
    /// - Parameters:
    ///   - times: how many retries after the first attempt (`times: 2` means at most 3 attempts).
    ///   - delay: pause between a failure and the next attempt; `.zero` retries right away.
    ///   - context: where `attempt` runs and which clock measures `delay`.
    ///   - shouldRetry: decides whether an error is worth retrying; by default every error is.
    ///   - attempt: starts one attempt.
    /// - Returns: a future with the first success, or the last failure.
    public static func retry(
        times: Int,
        delay: Duration = .zero,
        context: any ExecutionContext = .futuresDefault,
        when shouldRetry: @escaping @Sendable (any Error) -> Bool = { _ in true },
        _ attempt: @escaping @Sendable () -> Future<T>
    ) -> Future<T> {
        precondition(times >= 0, "retry(times:) needs a non-negative count")
        let promise = Promise<T>()
        @Sendable func run(retriesLeft: Int) {
            attempt().onComplete(context: .immediate) { result in
                guard case .failure(let error) = result, retriesLeft > 0, shouldRetry(error) else {
                    promise.complete(result)
                    return
                }
                if delay <= .zero {
                    context.execute { run(retriesLeft: retriesLeft - 1) }
                } else {
                    context.execute(after: delay) { run(retriesLeft: retriesLeft - 1) }
                }
            }
        }
        context.execute { run(retriesLeft: times) }
        return promise.future
    }
}
