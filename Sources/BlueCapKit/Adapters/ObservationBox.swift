// ObservationBox: a tree observation that may be cancelled before it is set.
import BlueZ
import Locking

/// One tree observation, cancellable from any thread before or after it is set.
final class ObservationBox: Sendable {
    private let state = Locked<(observation: ObjectTreeObservation?, cancelled: Bool)>((nil, false))

    func set(_ o: ObjectTreeObservation) {
        let cancelled = state.withLock { s -> Bool in
            if !s.cancelled { s.observation = o }
            return s.cancelled
        }
        if cancelled { o.cancel() }
    }

    func cancel() {
        let o = state.withLock { s -> ObjectTreeObservation? in
            s.cancelled = true
            defer { s.observation = nil }
            return s.observation
        }
        o?.cancel()
    }
}
