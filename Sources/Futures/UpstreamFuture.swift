// MARK: - UpstreamFuture

/// A future that a combinator's future waits for.
///
/// The combinator's future (`map`'s, `zip`'s, a promise completed with another future…) holds
/// each future it waits for strongly, in its `upstreams`, and the callback it registered there
/// carries its identity. When it is abandoned it tells each upstream to drop the callbacks
/// registered on its behalf, which abandons that future in turn if nothing else waits for it.
///
/// The reference is strong, so this costs no weak reference (and no side table) per link. The
/// cycle it makes with the upstream's callback (which owns the combinator's promise) lasts only
/// while both are pending, and is broken when either completes, when the combinator's future is
/// abandoned, or when the upstream's promise goes away uncompleted (it then drops its future's
/// callbacks and upstreams: nobody can complete it any more).
@usableFromInline
protocol UpstreamFuture: AnyObject, Sendable {
    /// Removes the callbacks registered on behalf of the future identified by `owner` (and
    /// their cancel token entries), if they have not been taken to run. This future is abandoned
    /// if they were its last callbacks.
    func dropInterest(of owner: ObjectIdentifier)
}
