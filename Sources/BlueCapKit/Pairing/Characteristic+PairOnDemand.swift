// Characteristic: reads and writes that pair on demand (what bleak's `pair=True` gives): a
// refusal for want of pairing calls Device1.Pair once and retries once.
import BlueZ
import Foundation
import Futures

extension Characteristic {
    // MARK: - Pair on demand

    /// Reads the value (`org.bluez.GattCharacteristic1.ReadValue`); with `pairOnDemand`, a read
    /// the device refuses for want of pairing (``BlueCapError/needsPairing``) pairs with
    /// ``Peripheral/pair(timeout:)-(Duration)`` (`org.bluez.Device1.Pair`) and reads once more.
    ///
    /// bluetoothd pairs by itself first: when the device answers Insufficient Encryption or
    /// Insufficient Authentication, it raises the link's security (kernel-started pairing, the
    /// *default* agent asked) and repeats the request, so this option matters only when that
    /// did not happen or could not succeed, e.g. our agent is registered but not as the default
    /// one (`Pair` asks the caller's agent), or bluetoothd could not raise the security itself
    /// and answered `NotPermitted` "Not paired". When bluetoothd's own pairing was refused it drops
    /// the link and answers `Failed` "ATT error: 0x0e": that is not retried (the link is gone).
    ///
    /// A failing `pair` fails the read with the pairing error (`.authenticationRejected`,
    /// `.authenticationFailed`…); there is no second retry. Without `pairOnDemand` the error
    /// surfaces unchanged.
    public func read(timeout: Duration = .seconds(10), pairOnDemand: Bool, pairingTimeout: Duration = .seconds(60)) -> Future<Characteristic> {
        let first = read(timeout: timeout)
        guard pairOnDemand else { return first }
        return first.recoverWith(context: .immediate) { [self] error in
            guard (error as? BlueCapError)?.needsPairing == true else { throw error }
            return peripheral.pair(timeout: pairingTimeout).flatMap(context: .immediate) { [self] in read(timeout: timeout) }
        }
    }

    /// Writes `data` (`org.bluez.GattCharacteristic1.WriteValue`); with `pairOnDemand`, a write
    /// refused for want of pairing pairs (`org.bluez.Device1.Pair`) and writes once more, as
    /// ``read(timeout:pairOnDemand:pairingTimeout:)`` does.
    public func write(data: Data, timeout: Duration = .seconds(10), type: WriteType = .withResponse, pairOnDemand: Bool,
                      pairingTimeout: Duration = .seconds(60)) -> Future<Characteristic> {
        let first = write(data: data, timeout: timeout, type: type)
        guard pairOnDemand else { return first }
        return first.recoverWith(context: .immediate) { [self] error in
            guard (error as? BlueCapError)?.needsPairing == true else { throw error }
            return peripheral.pair(timeout: pairingTimeout).flatMap(context: .immediate) { [self] in
                write(data: data, timeout: timeout, type: type)
            }
        }
    }
}

extension BlueCapError {
    // MARK: - Pairing needed

    /// Whether the device refused a GATT request because the link is not paired or not
    /// authorized: BlueZ's `NotPermitted` "Not paired" (what bluetoothd 5.66 answers for ATT
    /// 0x05 Insufficient Authentication, 0x0F Insufficient Encryption and 0x0C Insufficient
    /// Encryption Key Size), `NotAuthorized` (ATT 0x08), or a `Failed` message carrying one of
    /// those ATT codes.
    public var needsPairing: Bool {
        guard let bluez else { return false }
        if bluez.kind == .notAuthorized { return true }
        if bluez.kind == .notPermitted, bluez.message.localizedCaseInsensitiveContains("not paired") { return true }
        if let code = attError?.code { return [0x05, 0x08, 0x0c, 0x0f].contains(code) }
        return false
    }
}
