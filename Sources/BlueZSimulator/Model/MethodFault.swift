// MethodFault: faults injected into incoming method calls (delay, error reply, no reply).

// MARK: - MethodFault

/// A fault applied to incoming method calls matching `member` ("interface.Member", e.g.
/// "org.bluez.Device1.Connect") and, optionally, one object path.
public struct MethodFault: Sendable, Equatable {
    /// What happens to a matching call.
    public enum Action: Sendable, Equatable {
        /// The call is handled normally after `delay`.
        case delay(Duration)
        /// The call is answered with this error instead of being handled.
        case error(BlueZErrorReply)
        /// The call is never answered (the caller times out). The simulator keeps no reply
        /// pending beyond its hold time.
        case noReply
    }

    /// "interface.Member".
    public var member: String
    /// Only calls to this path (nil: any path).
    public var path: String?
    /// The fault.
    public var action: Action
    /// How many calls it applies to (nil: all, until cleared).
    public var remaining: Int?

    /// A fault on `member` (and `path`), for `count` calls (nil: every call).
    public init(_ member: String, path: String? = nil, action: Action, count: Int? = nil) {
        self.member = member
        self.path = path
        self.action = action
        self.remaining = count
    }
}

// MARK: - FaultPlan

/// The active method faults, first match wins; counted faults expire.
public struct FaultPlan: Sendable {
    private(set) var faults: [MethodFault] = []

    /// An empty plan.
    public init() {}

    /// Adds a fault.
    public mutating func add(_ fault: MethodFault) { faults.append(fault) }

    /// Removes every fault.
    public mutating func clear() { faults.removeAll() }

    /// The action for one call, consuming one use of a counted fault.
    public mutating func take(interface: String, member: String, path: String) -> MethodFault.Action? {
        let name = interface + "." + member
        guard let i = faults.firstIndex(where: { $0.member == name && ($0.path == nil || $0.path == path) }) else { return nil }
        let action = faults[i].action
        if let n = faults[i].remaining {
            if n <= 1 { faults.remove(at: i) } else { faults[i].remaining = n - 1 }
        }
        return action
    }
}
