// NotificationCounts: how many notifications a characteristic received, delivered and dropped.

// MARK: - NotificationDropRule

/// Why a notification did not reach an update stream's subscriber: the bound that was exceeded.
public enum NotificationDropRule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// It arrived while no update stream was open and none was awaited (no
    /// ``Characteristic/receiveNotificationUpdates(capacity:)`` since `startNotifying`'s
    /// hand-over was taken), or it was held for a stream that was not opened before the link
    /// dropped or notifications were stopped. ``Characteristic/value`` still took it.
    case noStream
    /// More than 100 notifications waited for the stream replacing a finished one (or the first
    /// stream after `startNotifying`): the oldest held one was dropped for each newer one.
    case heldLimit
    /// A subscription to an update stream was `FutureStream.subscriberBacklog` deliveries behind
    /// (the larger of the stream's `capacity` and 1,000): its oldest waiting delivery was dropped
    /// for each newer one (`FutureStream.droppedCount`, counted per subscription).
    case subscriberBacklog

    /// The rule's name.
    public var description: String { rawValue }
}

// MARK: - NotificationCounts

/// A characteristic's notification accounting since it was discovered (``Characteristic/notificationCounts``).
///
/// Counts are per update stream: a notification pushed to two open streams is delivered twice.
/// With one stream and one subscription (an app's usual chain), once that subscription has
/// taken what waited for it, `received == delivered + dropped + held`.
///
/// Only the update streams the characteristic returned are watched: a stream derived from one
/// (`map`, `flatMap`, …) has its own backlog, whose drops that stream's `droppedCount` tells.
public struct NotificationCounts: Sendable, Equatable, CustomStringConvertible {
    /// Notifications that arrived: datagrams on the `AcquireNotify` socket, or `Value` changes
    /// while notifications were on through `StartNotify` (`org.bluez.GattCharacteristic1`).
    public var received: Int
    /// Deliveries to update streams, each stream counted, less the ones a subscription's
    /// backlog dropped; includes deliveries still waiting in a subscription's queue.
    public var delivered: Int
    /// Notifications held now for an update stream yet to be opened (at most 100).
    public var held: Int
    /// Dropped notifications by the rule that dropped them (rules that dropped none are absent).
    public var droppedByRule: [NotificationDropRule: Int]

    /// Counts as given.
    public init(received: Int = 0, delivered: Int = 0, held: Int = 0, droppedByRule: [NotificationDropRule: Int] = [:]) {
        self.received = received
        self.delivered = delivered
        self.held = held
        self.droppedByRule = droppedByRule.filter { $0.value != 0 }
    }

    /// Every dropped notification, whatever the rule.
    public var dropped: Int { droppedByRule.values.reduce(0, +) }

    /// The notifications `rule` dropped.
    public func dropped(by rule: NotificationDropRule) -> Int { droppedByRule[rule] ?? 0 }

    /// "received 1050, delivered 1001, dropped 49 (subscriberBacklog 49), held 0".
    public var description: String {
        let rules = NotificationDropRule.allCases.compactMap { r in droppedByRule[r].map { "\(r) \($0)" } }
        return "received \(received), delivered \(delivered), dropped \(dropped)"
            + (rules.isEmpty ? "" : " (" + rules.joined(separator: ", ") + ")") + ", held \(held)"
    }
}
