// SlotUsage: one adapter's connection slots at a moment — budget, connections, reservations,
// queue.

// MARK: - SlotUsage

/// How one adapter's LE connection slots are used (``ConnectionSlots/usage(of:)``).
public struct SlotUsage: Sendable, Equatable, CustomStringConvertible {
    /// The adapter (`"hci0"`).
    public var adapter: String
    /// The most connections the library lets this adapter hold (``ConnectionSlots/budget(for:)``).
    public var budget: Int
    /// Devices BlueZ reports connected on the adapter (`org.bluez.Device1.Connected`), ours and
    /// other programs'.
    public var connected: Int
    /// Of ``connected``, those no peripheral of this session is connecting or connected to.
    public var connectedByOthers: Int
    /// Slots held by this session's connects that are not connected yet.
    public var connecting: Int
    /// Connects waiting for a free slot, in order.
    public var queued: Int

    /// Slots in use: connected devices plus connects under way.
    public var used: Int { connected + connecting }
    /// Slots left (never negative: another program may hold more than the budget).
    public var free: Int { max(0, budget - used) }

    /// "hci0: 3/5 used (1 by other programs), 1 connecting, 2 queued".
    public var description: String {
        "\(adapter): \(used)/\(budget) used (\(connectedByOthers) by other programs), \(connecting) connecting, \(queued) queued"
    }
}
