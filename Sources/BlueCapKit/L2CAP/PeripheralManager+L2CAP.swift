// PeripheralManager+L2CAP: publishing an L2CAP PSM on the manager's adapter.
import BlueZ
import Futures

extension PeripheralManager {
    // MARK: L2CAP channels

    /// Publishes an L2CAP connection-oriented channel (LE credit-based) on the manager's adapter:
    /// binds an L2CAP socket to the adapter's address (`Adapter1.Address`) and `psm`, and
    /// listens. Centrals open channels to the publication's ``L2CAPPublication/psm``; each
    /// arrives on ``L2CAPPublication/channels``.
    ///
    /// - Parameters:
    ///   - psm: nil (the default) to let the kernel choose a free dynamic PSM (0x0080–0x00FF,
    ///     read back from the socket); or a dynamic PSM; or a fixed one (0x0001–0x007F, which
    ///     needs `CAP_NET_BIND_SERVICE`).
    ///   - security: what a connecting central's link must have (``L2CAPSecurity/medium``:
    ///     encrypted, so the devices pair or use their bond).
    ///   - capacity: of each channel (see ``L2CAPChannel/capacity``) and of the stream of
    ///     channels.
    ///   - accepting: who may open a channel, by the central's address (`"AA:BB:CC:DD:EE:FF"`);
    ///     called on the publication's queue for each connection before it is delivered; false
    ///     closes it at once (counted in ``L2CAPPublication/refusedCount``). Nil (the default):
    ///     every central that meets `security`. See ``L2CAPPublication`` for who may connect.
    /// - Returns: the publication (keep it: releasing it unpublishes), once the manager is
    ///   powered on; fails with `.notReady` when it is not, `.alreadyExists` when the PSM is
    ///   taken, `.notPermitted` for a fixed PSM without the capability.
    public func publishL2CAPChannel(psm: UInt16? = nil, security: L2CAPSecurity = .low, capacity: Int = 16,
                                    accepting: (@Sendable (_ centralAddress: String) -> Bool)? = nil) -> Future<L2CAPPublication> {
        let operation = "PeripheralManager.publishL2CAPChannel"
        guard state == .poweredOn, let adapter = inner.withLock({ $0.adapter }), let tree = session.tree else {
            return Future(error: BlueCapError(kind: .notReady, operation: operation,
                                              message: "the peripheral manager is \(state), not powered on: wait for whenPoweredOn() first"))
        }
        let props = Adapter1.Properties(tree.properties(at: adapter, interface: Adapter1.interface) ?? [:], path: adapter)
        guard let address = props.address else {
            return Future(error: BlueCapError(kind: .notReady, operation: operation, path: adapter.rawValue,
                                              message: "BlueZ reports no Address for \(adapter.rawValue) yet: try again once the adapter is up"))
        }
        if let loopback = L2CAPLoopback.of(session.bus) {
            do throws(L2CAPSocketError) {
                return Future(value: try L2CAPPublication(loopback: { deliver throws(L2CAPSocketError) in try loopback.publish(address: address, psm: psm, deliver: deliver) },
                                                          unregister: { loopback.unpublish(address: address, psm: $0) },
                                                          address: address, security: security, capacity: capacity, accepting: accepting))
            } catch {
                return Future(error: L2CAPErrors.error(error, operation: "\(operation) (simulator)", psm: psm ?? 0, address: address))
            }
        }
        let type = props.addressType == "random" ? L2CAPSocketCalls.leRandom : L2CAPSocketCalls.lePublic
        let wanted = psm ?? 0
        do throws(L2CAPSocketError) {
            let fd = try L2CAPSocketCalls.socket(security: security.rawValue,
                                                 bind: .init(address: address, type: type, psm: wanted))
            do throws(L2CAPSocketError) {
                try L2CAPSocketCalls.listen(fd, backlog: 8)
            } catch {
                L2CAPSocketCalls.close(fd)
                throw error
            }
            let bound = L2CAPSocketCalls.localAddress(fd)?.psm ?? wanted
            return Future(value: L2CAPPublication(fd: fd, psm: bound, address: address, security: security, capacity: capacity,
                                                  accepting: accepting))
        } catch {
            return Future(error: L2CAPErrors.error(error, operation: "\(operation) (bind/listen)", psm: wanted, address: address))
        }
    }
}
