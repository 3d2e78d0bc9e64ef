// ObjectTreeObservation: the handle that ends an ObjectTree observation.
import DBus
import Locking

/// A registration with an ``ObjectTree``; `cancel()` (or releasing it) stops delivery.
public final class ObjectTreeObservation: Sendable {
    private let cancelBody: @Sendable () -> Void
    private let cancelled = Locked(false)

    /// A registration that runs `cancel` once when cancelled or released.
    public init(_ cancel: @escaping @Sendable () -> Void) { cancelBody = cancel }

    /// Stops delivery. Idempotent.
    public func cancel() {
        let first = cancelled.withLock { c -> Bool in
            defer { c = true }
            return !c
        }
        if first { cancelBody() }
    }

    deinit { cancel() }
}
