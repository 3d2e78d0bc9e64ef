// MARK: - UpstreamLink

/// An upstream and the future on whose behalf it is told to drop its callbacks.
@usableFromInline
struct UpstreamLink: Sendable {
    @usableFromInline let upstream: any UpstreamFuture
    @usableFromInline let owner: ObjectIdentifier

    @usableFromInline
    init(upstream: any UpstreamFuture, owner: ObjectIdentifier) {
        self.upstream = upstream
        self.owner = owner
    }
}
