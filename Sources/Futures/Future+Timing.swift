import Locking

// MARK: - Timeouts and retries

extension Future {
    /// A future with this future's result, or failing with ``FuturesError/timeout(after:)`` if
    /// this future is still pending after `delay`. If this future completes first, the timer is
    /// cancelled at once (it does not hold the promise until the deadline).
    ///
    /// When the timer fires, the returned future stops waiting for this one: its callback on
    /// this future is removed, so this future is abandoned if nothing else waits for it (see
    /// ``Promise/onAbandoned(_:)``): `stream.first().timeout(after:)` thus ends its
    /// subscription, and a scan behind it stops. If the returned future is abandoned itself,
    /// the timer is cancelled and the callback removed the same way. When the timer fires, the
    /// callback is removed (and abandonment handlers that run at once have run) before the
    /// returned future fails.
    /// - Parameters:
    ///   - delay: how long to wait for this future.
    ///   - context: supplies the timer; pass a ``ManualContext`` for virtual time.
    public func timeout(
        after delay: Duration,
        context: any ExecutionContext = .futuresDefault
    ) -> Future<T> {
        let promise = Promise<T>()
        let route = Locked<CallbackRoute?>(nil)
        let timer = context.schedule(after: delay) { [weak self] in
            guard !promise.isCompleted else { return }
            // Gives up waiting: releases this future first, so that whoever sees the timeout
            // sees the work behind this future already told to stop (see onAbandoned).
            if let self, let pending = route.withLock({ $0 }) { self.dropInterest(pending) }
            promise.failure(FuturesError.timeout(after: delay))
        }
        let registered = addRemovableCallback(context: .immediate, token: nil) { result in
            // Completed first: unschedule the timer so it stops holding the promise.
            timer.cancel()
            promise.complete(result)
        }
        route.withLock { $0 = registered }
        // The timer may have fired before the route was stored.
        if let registered, promise.isCompleted { dropInterest(registered) }
        promise.onAbandoned { [weak self] in
            timer.cancel()
            if let self, let registered { self.dropInterest(registered) }
        }
        return promise.future
    }

    /// ``timeout(after:context:)`` with the delay in seconds (`timeout(after: 10.0)`).
    public func timeout(
        after seconds: Double,
        context: any ExecutionContext = .futuresDefault
    ) -> Future<T> {
        timeout(after: .seconds(seconds), context: context)
    }

    /// Runs `attempt` and, while the future it returns fails with an error `when` accepts and
    /// retries remain, runs it again after `delay`.
    ///
    /// Abandoning the returned future (see ``Promise/onAbandoned(_:)``) abandons the attempt
    /// still pending (if nothing else waits for it), cancels a retry waiting for its delay, and
    /// starts no further attempt.
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
        // The retry waiting for its delay, if any; `isAbandoned` once the abandonment handler
        // below has taken it (a timer stored after that is cancelled by whoever stores it).
        let pending = Locked<(timer: ScheduledTask?, isAbandoned: Bool)>((nil, false))
        @Sendable func run(retriesLeft: Int) {
            // Abandonment is final: once it happened, no attempt starts. (An attempt started
            // just before it is abandoned through `addCallback(for:)`.)
            guard !promise.isAbandoned else { return }
            attempt().addCallback(for: promise.future, context: .immediate, token: nil) { result in
                guard case .failure(let error) = result, retriesLeft > 0, shouldRetry(error) else {
                    promise.complete(result)
                    return
                }
                if delay <= .zero {
                    context.execute { run(retriesLeft: retriesLeft - 1) }
                    return
                }
                let timer = context.schedule(after: delay) { run(retriesLeft: retriesLeft - 1) }
                let stale = pending.withLock { pending -> Bool in
                    if !pending.isAbandoned { pending.timer = timer }
                    return pending.isAbandoned
                }
                if stale { timer.cancel() }
            }
        }
        promise.onAbandoned {
            pending.withLock { pending -> ScheduledTask? in
                pending.isAbandoned = true
                defer { pending.timer = nil }
                return pending.timer
            }?.cancel()
        }
        context.execute { run(retriesLeft: times) }
        return promise.future
    }

    /// ``retry(times:delay:context:when:_:)`` with the delay in seconds (`delay: 0.5`).
    public static func retry(
        times: Int,
        delay seconds: Double,
        context: any ExecutionContext = .futuresDefault,
        when shouldRetry: @escaping @Sendable (any Error) -> Bool = { _ in true },
        _ attempt: @escaping @Sendable () -> Future<T>
    ) -> Future<T> {
        retry(times: times, delay: .seconds(seconds), context: context, when: shouldRetry, attempt)
    }
}
