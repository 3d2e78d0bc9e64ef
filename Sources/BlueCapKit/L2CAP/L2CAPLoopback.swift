// L2CAPLoopback: L2CAP channels across BlueZSimulator's virtual radio, over socket pairs.
import BlueZ
import Glibc
import Locking

/// The L2CAP "radio" of a simulated bus: BlueZ has no D-Bus API for L2CAP channels, so under
/// BlueZSimulator a publication registers here (adapter address, PSM) instead of binding a
/// kernel socket, and an `openL2CAPChannel` to that address and PSM gets one end of a
/// `SOCK_SEQPACKET` Unix socket pair while the publication gets the other: the same
/// ``L2CAPChannel`` code runs on both ends. Only channels between sessions of the same process
/// on the same simulated bus meet (as the simulator's adapters are linked); the security level
/// is not enforced, no LE link is made, and the MTUs are the kernel's default (672).
///
/// `Sendable`: the registry is behind its lock; deliveries run outside it.
package final class L2CAPLoopback: Sendable {
    /// What a publication does with an incoming channel: its socket and the central's address.
    typealias Deliver = @Sendable (Int32, String) -> Void

    struct Key: Hashable { let address: String; let psm: UInt16 }

    private static let buses = Locked<[String: L2CAPLoopback]>([:])
    private let listeners = Locked<[Key: Deliver]>([:])

    // MARK: Buses

    /// The MTU both ends report (the Linux kernel's default for LE channels).
    static let mtu = 672

    /// Routes the L2CAP channels of sessions on `busAddress` through a loopback (called by
    /// BlueZSimulator for the sessions it hands out). Idempotent.
    package static func enable(forBus busAddress: String) {
        buses.withLock { if $0[busAddress] == nil { $0[busAddress] = L2CAPLoopback() } }
    }

    /// Ends the loopback of `busAddress` (the simulator stopped); publications on it stay
    /// registered in their own loopback object but no new session finds it.
    package static func disable(forBus busAddress: String) {
        _ = buses.withLock { $0.removeValue(forKey: busAddress) }
    }

    /// The loopback of `bus`, when it is a simulated one.
    static func of(_ bus: BluetoothSession.Bus) -> L2CAPLoopback? {
        guard case .address(let a) = bus else { return nil }
        return buses.withLock { $0[a] }
    }

    // MARK: Publishing and connecting

    /// Registers `deliver` for `psm` (nil: the first free PSM from 0x0080) at `address`.
    func publish(address: String, psm: UInt16?, deliver: @escaping Deliver) throws(L2CAPSocketError) -> UInt16 {
        try listeners.withLock { (l: inout [Key: Deliver]) throws(L2CAPSocketError) -> UInt16 in
            let chosen: UInt16
            if let psm {
                chosen = psm
            } else {
                guard let free = (UInt16(0x80)...0xFF).first(where: { l[Key(address: address, psm: $0)] == nil }) else {
                    throw L2CAPSocketError(call: "bind", errno: EADDRINUSE)
                }
                chosen = free
            }
            guard l[Key(address: address, psm: chosen)] == nil else { throw L2CAPSocketError(call: "bind", errno: EADDRINUSE) }
            l[Key(address: address, psm: chosen)] = deliver
            return chosen
        }
    }

    /// Removes the publication of `psm` at `address`.
    func unpublish(address: String, psm: UInt16) {
        _ = listeners.withLock { $0.removeValue(forKey: Key(address: address, psm: psm)) }
    }

    /// Connects `from` to `psm` at `address`: our end of a new socket pair, the other delivered
    /// to the publication. `ECONNREFUSED` when nothing is published there.
    func connect(from: String, to address: String, psm: UInt16) throws(L2CAPSocketError) -> Int32 {
        guard let deliver = listeners.withLock({ $0[Key(address: address, psm: psm)] }) else {
            throw L2CAPSocketError(call: "connect", errno: ECONNREFUSED)
        }
        let (ours, theirs) = try L2CAPSocketCalls.seqpacketPair()
        deliver(theirs, from)
        return ours
    }
}
