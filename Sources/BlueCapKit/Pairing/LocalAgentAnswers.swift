// LocalAgentAnswers: the refusals this process's agents gave, so that a failed pairing can say
// that our own agent refused it.
import Locking

/// What this process's ``PairingAgent``s refused, per D-Bus connection and device, most recent
/// only: the agent registered on the connection that called `Device1.Pair` is the one bluetoothd
/// asks for that pairing (and two simulated bluetoothds in one test process share device paths).
///
/// bluetoothd reports a pairing its own agent refused like any failed SMP exchange
/// (`org.bluez.Error.AuthenticationFailed`, mgmt status 0x05 "Authentication Failed"; seen in the
/// VM with bluetoothd 5.66): `Peripheral.pair(timeout:)` uses this record to report
/// `AuthenticationRejected` (or `AuthenticationCanceled`) when one of our agents said no to that
/// device during that pairing.
enum LocalAgentAnswers {
    struct Refusal {
        let reply: AgentReplyKind
        let at: ContinuousClock.Instant
    }
    enum AgentReplyKind { case rejected, canceled }

    /// At most this many devices are remembered; the oldest entry goes first.
    static let limit = 64
    private static let refusals = Locked<[String: Refusal]>([:])

    static func key(_ connection: ObjectIdentifier, _ device: String) -> String { "\(UInt(bitPattern: connection))|\(device)" }

    static func record(connection: ObjectIdentifier, device: String, _ reply: AgentReplyKind) {
        let device = key(connection, device)
        refusals.withLock { r in
            if r.count >= limit, r[device] == nil, let oldest = r.min(by: { $0.value.at < $1.value.at })?.key {
                r.removeValue(forKey: oldest)
            }
            r[device] = Refusal(reply: reply, at: .now)
        }
    }

    /// The refusal for `device` made at or after `since`, removed from the record.
    static func take(connection: ObjectIdentifier, device: String, since: ContinuousClock.Instant) -> AgentReplyKind? {
        let device = key(connection, device)
        return refusals.withLock { r in
            guard let refusal = r[device], refusal.at >= since else { return nil }
            r.removeValue(forKey: device)
            return refusal.reply
        }
    }
}
