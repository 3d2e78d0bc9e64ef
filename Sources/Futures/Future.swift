import Synchronization

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
public final class Future<T: Sendable>: Sendable {
    struct Callback: Sendable {
        let context: any ExecutionContext
        let token: CancelToken?
        let tokenID: Int
        let body: @Sendable (Result<T, any Error>) -> Void

        func run(_ result: Result<T, any Error>) {
            let body = self.body
            if let token {
                let id = tokenID
                context.execute {
                    guard token.unregister(id) else { return }  // lost to cancel()
                    body(result)
                }
            } else {
                context.execute { body(result) }
            }
        }
    }

    struct State {
        var result: Result<T, any Error>?
        var callbacks: [Callback] = []
    }

    // Sendable through this lock: the result and the callbacks are only touched under it.
    let state: Locked<State>

    init() {
        state = Locked(State())
    }

    // MARK: Creating completed futures

    /// Creates a future already completed with `result`.
    public init(result: Result<T, any Error>) {
        state = Locked(State(result: result))
    }

    /// Creates a future already completed with `value`.
    public convenience init(value: T) {
        self.init(result: .success(value))
    }

    /// Creates a future already completed with `error`.
    public convenience init(error: any Error) {
        self.init(result: .failure(error))
    }

    // MARK: State

    /// The result, or nil while the future is pending.
    public var result: Result<T, any Error>? { state.withLock { $0.result } }

    /// Whether the future is completed.
    public var isCompleted: Bool { state.withLock { $0.result != nil } }

    /// The number of callbacks waiting for completion (for tests and diagnostics).
    var waitingCallbackCount: Int { state.withLock { $0.callbacks.count } }

    // MARK: Callbacks

    /// Calls `completion` with the result once the future completes (right away, on `context`,
    /// if it already has).
    /// - Parameters:
    ///   - context: where `completion` runs; the library's serial queue by default.
    ///   - cancelToken: cancelling it before `completion` starts prevents it from ever running.
    public func onComplete(
        context: any ExecutionContext = .futuresDefault,
        cancelToken: CancelToken? = nil,
        _ completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        addCallback(context: context, token: cancelToken, onCancel: nil, completion)
    }

    /// Calls `success` with the value if the future succeeds.
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
    @discardableResult
    func complete(_ result: Result<T, any Error>) -> Bool {
        let callbacks = state.withLock { state -> [Callback]? in
            guard state.result == nil else { return nil }
            state.result = result
            let callbacks = state.callbacks
            state.callbacks = []
            return callbacks
        }
        guard let callbacks else { return false }
        for callback in callbacks { callback.run(result) }
        return true
    }

    /// Registers `body`. With a token, `onCancel` runs instead of `body` if the token wins.
    /// Returns `false` (registering nothing) if the token was already cancelled.
    @discardableResult
    func addCallback(
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
        let callback = Callback(context: context, token: token, tokenID: tokenID, body: body)
        let completed = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            state.callbacks.append(callback)
            return nil
        }
        if let completed { callback.run(completed) }
        return true
    }

    private func removeCallback(token: CancelToken, id: Int) {
        state.withLock { state in
            state.callbacks.removeAll { $0.token === token && $0.tokenID == id }
        }
    }
}
