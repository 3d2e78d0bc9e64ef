// Peripheral+L2CAP: opening an L2CAP channel to a peripheral's PSM.
import BlueZ
import DBus
import Dispatch
import Foundation
import Futures
import Locking

extension Peripheral {
    // MARK: L2CAP channels

    /// Opens an L2CAP connection-oriented channel (LE credit-based) to `psm` on this
    /// peripheral: an L2CAP socket bound to the local adapter (`Adapter1.Address`) connects to
    /// the device's `Device1.Address` and `Device1.AddressType`. The kernel makes the LE link
    /// itself when there is none (the device must then be advertising connectable).
    ///
    /// - Parameters:
    ///   - psm: the PSM the peripheral published (its app tells it: a GATT characteristic, a
    ///     fixed value, …).
    ///   - security: ``L2CAPSecurity/medium`` or ``L2CAPSecurity/high`` encrypt the link first
    ///     (the kernel pairs, or uses the bond).
    ///   - capacity: the channel's ``L2CAPChannel/capacity``.
    ///   - timeout: how long the connection may take.
    /// - Returns: the open channel; fails with `.connectionAttemptFailed` when nothing is
    ///   published on the PSM or the device does not answer, `.timeout` after `timeout`.
    public func openL2CAPChannel(psm: UInt16, security: L2CAPSecurity = .low, capacity: Int = 16,
                                 timeout: Duration = .seconds(30)) -> Future<L2CAPChannel> {
        let operation = "Peripheral.openL2CAPChannel"
        let device = deviceProperties
        guard let adapter = device.adapter ?? Self.adapterPath(of: path) else {
            return Future(error: BlueCapError(kind: .doesNotExist, operation: operation, path: identifier,
                                              message: "no adapter known for \(identifier)"))
        }
        let adapterProps = Adapter1.Properties(tree.properties(at: adapter, interface: Adapter1.interface) ?? [:], path: adapter)
        guard let local = adapterProps.address else {
            return Future(error: BlueCapError(kind: .notReady, operation: operation, path: adapter.rawValue,
                                              message: "BlueZ reports no Address for \(adapter.rawValue): is the adapter powered and bluetoothd running?"))
        }
        if let loopback = L2CAPLoopback.of(session.bus) {
            do throws(L2CAPSocketError) {
                let fd = try loopback.connect(from: local, to: address, psm: psm)
                return Future(value: L2CAPChannel(fd: fd, remoteAddress: address, psm: psm, sendMTU: L2CAPLoopback.mtu,
                                                  receiveMTU: L2CAPLoopback.mtu, capacity: capacity))
            } catch {
                return Future(error: L2CAPErrors.error(error, operation: "\(operation) (simulator)", psm: psm, address: address))
            }
        }
        let localType = adapterProps.addressType == "random" ? L2CAPSocketCalls.leRandom : L2CAPSocketCalls.lePublic
        let remoteType = device.addressType == "random" ? L2CAPSocketCalls.leRandom : L2CAPSocketCalls.lePublic
        let remote = address
        let fd: Int32
        do throws(L2CAPSocketError) {
            fd = try L2CAPSocketCalls.socket(security: security.rawValue, bind: .init(address: local, type: localType, psm: 0))
            if try L2CAPSocketCalls.connect(fd, to: .init(address: remote, type: remoteType, psm: psm)) {
                let mtus = L2CAPSocketCalls.mtus(fd)
                return Future(value: L2CAPChannel(fd: fd, remoteAddress: remote, psm: psm, sendMTU: mtus.send,
                                                  receiveMTU: mtus.receive, capacity: capacity))
            }
        } catch {
            return Future(error: L2CAPErrors.error(error, operation: operation, psm: psm, address: remote))
        }
        return L2CAPConnectAttempt(fd: fd, remote: remote, psm: psm, capacity: capacity, operation: operation)
            .run(timeout: timeout, clock: self)
    }

    /// `/org/bluez/hci0` of `/org/bluez/hci0/dev_…`.
    static func adapterPath(of device: ObjectPath) -> ObjectPath? {
        let parts = device.rawValue.split(separator: "/")
        guard parts.count >= 3 else { return nil }
        return try? ObjectPath("/" + parts.dropLast().joined(separator: "/"))
    }
}

// MARK: - Seconds

extension Peripheral {
    /// ``openL2CAPChannel(psm:security:capacity:timeout:)`` with the timeout in seconds
    /// (the rule of SecondsTimeouts.swift).
    @_documentation(visibility: internal)
    public func openL2CAPChannel(psm: UInt16, security: L2CAPSecurity = .low, capacity: Int = 16,
                                 timeout seconds: TimeInterval) -> Future<L2CAPChannel> {
        openL2CAPChannel(psm: psm, security: security, capacity: capacity, timeout: .bluecapSeconds(seconds))
    }
}
