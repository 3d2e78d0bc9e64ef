import Locking
import Synchronization

// MARK: - Abandonment

extension Future: UpstreamFuture {
    /// Removes the callback registered under `route` if it has not been taken to run (and its
    /// cancel token entry). The future is abandoned if that was its last callback.
    @usableFromInline
    func dropInterest(_ route: CallbackRoute) {
        if let token = route.token { _ = token.unregister(route.tokenID) }
        removeCallbacks { $0.route === route }
    }

    @usableFromInline
    func dropInterest(of owner: ObjectIdentifier) {
        let removed = removeCallbacks { $0.owner == owner }
        removed.forEach { callback in
            if let route = callback.route, let token = route.token { _ = token.unregister(route.tokenID) }
        }
    }

    @usableFromInline
    func removeCallback(token: CancelToken, id: Int) {
        removeCallbacks { $0.isRegistered(with: token, id: id) }
    }

    /// Removes the callbacks `match` accepts, and returns them (for the caller to release,
    /// after the lock: a callback may own anything). When that leaves a pending future with
    /// none, the future is abandoned: its handlers run, and its upstreams are told to drop
    /// their callbacks for it (once, on this thread's trampoline, no lock held).
    @usableFromInline
    @discardableResult
    func removeCallbacks(where match: (Callback) -> Bool) -> CallbackList<Callback> {
        var removed = CallbackList<Callback>()
        var upstreams = CallbackList<any UpstreamFuture>()
        let handlers = state.withLock { state -> CallbackList<@Sendable () -> Void> in
            guard case .none = state.result else { return CallbackList() }
            let all = state.callbacks.takeAll()
            all.forEach { callback in
                if match(callback) { removed.append(callback) } else { state.callbacks.append(callback) }
            }
            guard !removed.isEmpty, state.callbacks.isEmpty, !state.isAbandoned else { return CallbackList() }
            state.isAbandoned = true
            upstreams = state.upstreams.takeAll()
            return state.abandonHandlers.takeAll()
        }
        handlers.forEach { handler in Trampoline.current.run(handler) }
        let owner = ObjectIdentifier(self)
        upstreams.forEach { upstream in
            Trampoline.current.run({ (link: UpstreamLink) in link.upstream.dropInterest(of: link.owner) },
                                   with: UpstreamLink(upstream: upstream, owner: owner))
        }
        return removed
    }

    /// Runs `handler` once if the future is abandoned (at once if it already was); drops it
    /// when the future completes first.
    @usableFromInline
    func onAbandoned(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard case .none = state.result else { return false }
            if state.isAbandoned { return true }
            state.abandonHandlers.append(handler)
            return false
        }
        if runNow { Trampoline.current.run(handler) }
    }

    // MARK: Combinators' links

    /// Registers `body` on behalf of `derived`, the future of a combinator that waits for this
    /// one: if `derived` is abandoned while `body` waits, `body` is removed, which abandons this
    /// future in turn if nothing else waits for it. Every combinator registers on the futures it
    /// waits for through here (or ``Promise/completeWith(context:future:)``, which does the
    /// same), so abandonment travels up to each of them.
    ///
    /// Costs one strong reference in `derived` (see ``UpstreamFuture``), released when
    /// `derived` completes; nothing more than the callback itself.
    @inlinable
    func addCallback<M>(
        for derived: Future<M>,
        context: any ExecutionContext,
        token: CancelToken?,
        _ body: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let owner = ObjectIdentifier(derived)
        guard addCallback(owner: owner, context: context, token: token, onCancel: nil, body) else { return }
        if !derived.addUpstream(self) { dropInterest(of: owner) }
    }

    /// The future of a combinator that waits for this one alone: a promise created waiting
    /// for this future (holding it as its upstream from the start, so the link takes no lock),
    /// and the callback `makeBody` returns for it, registered on its behalf as by
    /// ``addCallback(for:context:token:_:)``.
    @inlinable
    func derive<M>(
        context: any ExecutionContext,
        token: CancelToken?,
        _ makeBody: (Promise<M>) -> @Sendable (Result<T, any Error>) -> Void
    ) -> Future<M> {
        let promise = Promise<M>(waitingFor: self)
        addCallback(owner: ObjectIdentifier(promise.future), context: context, token: token, onCancel: nil,
                    makeBody(promise))
        return promise.future
    }

    /// Keeps `upstream` among the futures this one waits for. Returns `false` if this future
    /// was already abandoned (the caller then drops its callback there at once); a completed
    /// future keeps nothing.
    @inlinable
    func addUpstream(_ upstream: any UpstreamFuture) -> Bool {
        state.withLock { state -> Bool in
            guard case .none = state.result else { return true }
            if state.isAbandoned { return false }
            state.upstreams.append(upstream)
            mayHaveCallbacks.store(true, ordering: .relaxed)
            return true
        }
    }
}
