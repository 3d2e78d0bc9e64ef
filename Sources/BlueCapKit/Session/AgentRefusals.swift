// AgentRefusals: what a session's pairing agents refused, so that a failed pairing can say
// that our own agent refused it.
import Locking
import Timing

/// What the ``PairingAgent`` registered in a session refused, per device, most recent only: the
/// agent registered on the session whose manager called `Device1.Pair` is the one bluetoothd
/// asks for that pairing.
///
/// bluetoothd reports a pairing its own agent refused like any failed SMP exchange
/// (`org.bluez.Error.AuthenticationFailed`, mgmt status 0x05 "Authentication Failed"; seen in the
/// VM with bluetoothd 5.66): `Peripheral.pair(timeout:)` uses this record to report
/// `AuthenticationRejected` (or `AuthenticationCanceled`) when the agent said no to that device
/// during that pairing. Times are the session clock's readings.
final class AgentRefusals: Sendable {
    enum Reply { case rejected, canceled }
    private struct Refusal {
        let reply: Reply
        let at: Duration
    }

    /// At most this many devices are remembered; the oldest entry goes first.
    static let limit = 64
    private let clock: any TimerClock
    // Sendable through this lock; nothing is called while it is held.
    private let refusals = Locked<[String: Refusal]>([:])

    init(clock: any TimerClock) { self.clock = clock }

    /// Records that the agent answered `reply` for the device object at `device`.
    func record(device: String, _ reply: Reply) {
        let now = clock.now
        refusals.withLock { r in
            if r.count >= Self.limit, r[device] == nil, let oldest = r.min(by: { $0.value.at < $1.value.at })?.key {
                r.removeValue(forKey: oldest)
            }
            r[device] = Refusal(reply: reply, at: now)
        }
    }

    /// The refusal for `device` made at or after `since` (a reading of the session's clock),
    /// removed from the record.
    func take(device: String, since: Duration) -> Reply? {
        refusals.withLock { r in
            guard let refusal = r[device], refusal.at >= since else { return nil }
            r.removeValue(forKey: device)
            return refusal.reply
        }
    }
}
