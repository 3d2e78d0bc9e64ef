import Synchronization
import Locking

// MARK: - Future

/// A value (or an error) that becomes available later, exactly once.
///
/// A `Future` is completed by its ``Promise``. Callbacks registered with ``onComplete(context:cancelToken:_:)``
/// (and the combinators built on it) run exactly once each, on the given ``ExecutionContext``,
/// whether they were registered before or after completion.
///
/// Thread safety: the result and the callback list live in one lock (`Locked`, a pthread mutex), so setting the result
/// and adding a callback exclude each other — no callback is lost or run twice. User code is
/// never called while the lock is held.
///
/// Performance: the registration and completion paths are `@inlinable`, so code in other modules
/// gets them specialised for its concrete `T` (no generic metadata lookups at run time); a
/// callback on ``ImmediateContext`` costs no allocation beyond its closure.
public final class Future<T: Sendable>: Sendable {
    /// A waiting callback: two words (the closure) plus one reference, nil for the common
    /// case of an ``ImmediateContext`` without a cancel token, so the callback list copies and
    /// destroys callbacks with a few retains and releases.
    @usableFromInline
    struct Callback: Sendable {
        @usableFromInline
        let body: @Sendable (Result<T, any Error>) -> Void
        @usableFromInline
        let route: CallbackRoute?
        /// The future of the combinator this callback completes, when it was registered on that
        /// future's behalf (see ``Future/addCallback(for:context:token:_:)``): its abandonment
        /// removes the callback by this identity.
        @usableFromInline
        let owner: ObjectIdentifier?

        /// A callback with its own route, removable by the route's identity (see
        /// ``Future/addRemovableCallback(context:token:_:)``).
        @inlinable
        init(route: CallbackRoute, body: @escaping @Sendable (Result<T, any Error>) -> Void) {
            self.body = body
            self.route = route
            self.owner = nil
        }

        @inlinable
        init(
            context: any ExecutionContext, token: CancelToken?, tokenID: Int, owner: ObjectIdentifier? = nil,
            body: @escaping @Sendable (Result<T, any Error>) -> Void
        ) {
            self.body = body
            self.owner = owner
            if token == nil, type(of: context) == ImmediateContext.self {
                route = nil
            } else {
                route = CallbackRoute(context: context, token: token, tokenID: tokenID)
            }
        }

        /// Whether this callback was registered with `token` under `id`.
        @inlinable
        func isRegistered(with token: CancelToken, id: Int) -> Bool {
            guard let route else { return false }
            return route.token === token && route.tokenID == id
        }

        @inlinable
        func run(_ result: Result<T, any Error>) {
            let body = self.body
            guard let route else {
                // Immediate context, no token: through the thread's trampoline, no new closure.
                Trampoline.current.run(body, with: result)
                return
            }
            if let token = route.token {
                let id = route.tokenID
                route.context.execute {
                    guard token.unregister(id) else { return }  // lost to cancel()
                    body(result)
                }
            } else if route.isImmediate {
                Trampoline.current.run(body, with: result)
            } else {
                route.context.execute { body(result) }
            }
        }
    }

    @usableFromInline
    struct State {
        @usableFromInline
        var result: Result<T, any Error>?
        @usableFromInline
        var callbacks = CallbackList<Callback>()
        /// Set once every callback was removed (cancelled) while the future was pending.
        @usableFromInline
        var isAbandoned = false
        /// The ``Promise/onAbandoned(_:)`` handlers, released when the future completes.
        @usableFromInline
        var abandonHandlers = CallbackList<@Sendable () -> Void>()
        /// The futures this one's combinator waits for, held strongly (see ``UpstreamFuture``):
        /// told to drop this future's callbacks when it is abandoned; released when it completes,
        /// is abandoned, or its promise goes away uncompleted.
        @usableFromInline
        var upstreams = CallbackList<any UpstreamFuture>()

        @inlinable
        init(result: Result<T, any Error>? = nil) {
            self.result = result
        }
    }

    // Sendable through this lock: the result and the callbacks are only touched under it.
    @usableFromInline
    let state: Locked<State>

    /// Whether callbacks or upstreams may be held in `state` (written under the lock of
    /// `state`). Lets `deinit` and ``Promise``'s `deinit`, which run the module's unspecialised
    /// generic code, skip `state` (and its run-time generic metadata lookups) in the common case
    /// of a completed future.
    @usableFromInline
    let mayHaveCallbacks = Atomic<Bool>(false)

    @inlinable
    init() {
        state = Locked(State())
    }

    /// A pending future that waits for `upstream` (a combinator's future, see ``UpstreamFuture``).
    @inlinable
    init(upstream: any UpstreamFuture) {
        var state = State()
        state.upstreams.append(upstream)
        self.state = Locked(state)
        mayHaveCallbacks.store(true, ordering: .relaxed)
    }

    deinit {
        // A never-completed future owns its callbacks, which own the promises of the futures
        // derived from it, and its upstreams, and so on along a chain. Hand them to the
        // thread's release loop so that tearing down a chain of any length uses constant stack.
        guard mayHaveCallbacks.load(ordering: .relaxed) else { return }
        dropReferences()
    }

    /// Releases the callbacks and upstreams of a future that can no longer complete (its
    /// promise went away) or is being deinitialised, through the thread's release loop.
    @usableFromInline
    func dropReferences() {
        var held: Any? = state.withLock { state -> Any? in
            guard case .none = state.result, !(state.callbacks.isEmpty && state.upstreams.isEmpty) else { return nil }
            mayHaveCallbacks.store(false, ordering: .relaxed)
            return (state.callbacks.takeAll(), state.upstreams.takeAll())
        }
        if held != nil { Trampoline.current.release(&held) }
    }

    // MARK: Creating completed futures

    /// Creates a future already completed with `result`.
    @inlinable
    public init(result: Result<T, any Error>) {
        state = Locked(State(result: result))
    }

    /// Creates a future already completed with `value`.
    @inlinable
    public convenience init(value: T) {
        self.init(result: .success(value))
    }

    /// Creates a future already completed with `error`.
    @inlinable
    public convenience init(error: any Error) {
        self.init(result: .failure(error))
    }

    // MARK: State

    /// The result, or nil while the future is pending.
    @inlinable
    public var result: Result<T, any Error>? { state.withLock { $0.result } }

    /// Whether the future is completed.
    @inlinable
    public var isCompleted: Bool { state.withLock { $0.result != nil } }

    /// The number of callbacks waiting for completion (for tests and diagnostics).
    var waitingCallbackCount: Int { state.withLock { $0.callbacks.count } }

    /// Whether the future was abandoned: it is pending, had at least one callback, and every
    /// callback has since been cancelled (see ``Promise/onAbandoned(_:)``).
    public var isAbandoned: Bool { state.withLock { $0.isAbandoned } }

    // MARK: Callbacks

    /// Calls `completion` with the result once the future completes (right away, on `context`,
    /// if it already has).
    /// - Parameters:
    ///   - context: where `completion` runs; the library's serial queue by default.
    ///   - cancelToken: cancelling it before `completion` starts prevents it from ever running.
    ///   - completion: receives the result.
    @inlinable
    public func onComplete(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        addCallback(context: context, token: cancelToken, onCancel: nil, completion)
    }

    /// Calls `success` with the value if the future succeeds.
    @inlinable
    public func onSuccess(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ success: @escaping @Sendable (T) -> Void
    ) {
        onComplete(context: context, cancelToken: cancelToken) { result in
            if case .success(let value) = result { success(value) }
        }
    }

    /// Calls `failure` with the error if the future fails.
    @inlinable
    public func onFailure(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ failure: @escaping @Sendable (any Error) -> Void
    ) {
        onComplete(context: context, cancelToken: cancelToken) { result in
            if case .failure(let error) = result { failure(error) }
        }
    }

    // MARK: Internal core

    /// Sets the result and runs the waiting callbacks. Returns `false` if already completed.
    @inlinable
    @discardableResult
    func complete(_ result: Result<T, any Error>) -> Bool {
        // The abandonment handlers are released after the lock (they may own anything).
        var handlers = CallbackList<@Sendable () -> Void>()
        var upstreams = CallbackList<any UpstreamFuture>()
        let callbacks = state.withLock { state -> CallbackList<Callback>? in
            guard case .none = state.result else { return nil }
            state.result = result
            mayHaveCallbacks.store(false, ordering: .relaxed)
            if !state.abandonHandlers.isEmpty { handlers = state.abandonHandlers.takeAll() }
            if !state.upstreams.isEmpty { upstreams = state.upstreams.takeAll() }
            return state.callbacks.takeAll()
        }
        // An upstream released here is completed or still owned by its promise (a promise that
        // goes away uncompleted drops its future's upstreams), so no chain is torn down here.
        _ = handlers
        _ = upstreams
        guard let callbacks else { return false }
        callbacks.forEach { $0.run(result) }
        return true
    }

    /// Registers `body`. With a token, `onCancel` runs instead of `body` if the token wins.
    /// Returns `false` (registering nothing) if the token was already cancelled. `owner` names
    /// the combinator's future that `body` completes (see ``addCallback(for:context:token:_:)``).
    @inlinable
    @discardableResult
    func addCallback(
        owner: ObjectIdentifier? = nil,
        context: any ExecutionContext,
        token: CancelToken?,
        onCancel: (@Sendable () -> Void)?,
        _ body: @escaping @Sendable (Result<T, any Error>) -> Void
    ) -> Bool {
        var tokenID = 0
        if let token {
            let registered = token.register { [weak self] id in
                self?.removeCallback(token: token, id: id)
                onCancel?()
            }
            guard let registered else { return false }
            tokenID = registered
        }
        let callback = Callback(context: context, token: token, tokenID: tokenID, owner: owner, body: body)
        let completed = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            // Cancelled since `register`: its canceller found nothing to remove; adding the
            // callback now would leave it waiting for good (and the future never abandoned).
            if let token, token.isCancelled { return nil }
            state.callbacks.append(callback)
            mayHaveCallbacks.store(true, ordering: .relaxed)
            return nil
        }
        if let completed { callback.run(completed) }
        return true
    }

    /// Registers `body` like ``addCallback(context:token:onCancel:_:)``, and returns its route:
    /// ``dropInterest(_:)`` removes it while the future is pending. Returns nil when nothing
    /// is left to remove (the future had completed and `body` ran, or the token was cancelled).
    @inlinable
    func addRemovableCallback(
        context: any ExecutionContext,
        token: CancelToken?,
        _ body: @escaping @Sendable (Result<T, any Error>) -> Void
    ) -> CallbackRoute? {
        var tokenID = 0
        if let token {
            let registered = token.register { [weak self] id in
                self?.removeCallback(token: token, id: id)
            }
            guard let registered else { return nil }
            tokenID = registered
        }
        let route = CallbackRoute(context: context, token: token, tokenID: tokenID)
        let callback = Callback(route: route, body: body)
        let completed = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            // Cancelled since `register`: its canceller found nothing to remove; adding the
            // callback now would leave it waiting for good (and the future never abandoned).
            if let token, token.isCancelled { return nil }
            state.callbacks.append(callback)
            mayHaveCallbacks.store(true, ordering: .relaxed)
            return nil
        }
        if let completed {
            callback.run(completed)
            return nil
        }
        return route
    }
}
