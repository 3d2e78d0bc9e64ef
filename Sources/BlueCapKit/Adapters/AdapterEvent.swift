// AdapterEvent: an adapter added, removed or changed.

/// A change in the set of adapters or in one adapter, from ``Adapters/whenAdaptersChange(capacity:)``.
public enum AdapterEvent: Sendable, Equatable, CustomStringConvertible {
    /// An adapter appeared (plugged in, or published by a (re)started bluetoothd).
    case added(Adapter)
    /// An adapter disappeared (unplugged, or bluetoothd left the bus); the last snapshot.
    case removed(Adapter)
    /// A property of an adapter changed (powered, alias, discovering…); the new snapshot.
    case changed(Adapter)

    /// The adapter concerned.
    public var adapter: Adapter {
        switch self {
        case .added(let a), .removed(let a), .changed(let a): return a
        }
    }

    public var description: String {
        switch self {
        case .added(let a): return "added \(a)"
        case .removed(let a): return "removed \(a)"
        case .changed(let a): return "changed \(a)"
        }
    }
}
