// BluetoothSession+Availability: whether bluetoothd can be reached, said as cause and fix.
import BlueZ
import Futures

extension BluetoothSession {
    /// Succeeds once the session is connected and `org.bluez` has an owner on its bus (asked with
    /// `org.freedesktop.DBus.GetNameOwner`). Fails with a ``BlueCapError`` whose message names the
    /// cause and the fix, one line, ready to print:
    /// - `.busUnavailable`: the bus cannot be reached ("cannot connect to the system bus (…) — is
    ///   dbus running?"), or the session was closed;
    /// - `.serviceUnavailable`: no bluetoothd ("no org.bluez on the system bus — is bluetoothd
    ///   running? (systemctl start bluetooth)");
    /// - `.timeout`: the bus did not answer within `timeout`.
    public func checkAvailable(timeout: Duration = .seconds(5)) -> Future<Void> {
        let operation = "BluetoothSession.checkAvailable (org.freedesktop.DBus.GetNameOwner)"
        guard let tree, isOpen else {
            let reason = unavailableReason ?? "no connection"
            return Future(error: BlueCapError(kind: .busUnavailable, operation: operation,
                                              message: "cannot connect to the \(bus) (\(reason)) — is dbus running?"))
        }
        let promise = Promise<Void>()
        let deadline = clock.schedule(after: timeout) {
            promise.failure(BlueCapError(kind: .timeout, operation: operation,
                                         message: "the \(self.bus) did not answer within \(timeout) — is dbus running?"))
        }
        let bus = self.bus
        // The tree asked for the owner when it started; a round trip sent now is answered after
        // that question, so the status is known when it returns.
        tree.synchronize {
            deadline.cancel()
            if tree.status.owner != nil {
                promise.success(())
            } else {
                promise.failure(BlueCapError(kind: .serviceUnavailable, operation: operation,
                                             message: "no org.bluez on the \(bus) — is bluetoothd running? (systemctl start bluetooth)"))
            }
        }
        return promise.future
    }
}
