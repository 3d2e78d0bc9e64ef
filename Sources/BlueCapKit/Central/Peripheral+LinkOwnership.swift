// Peripheral: whether its connection holds the device's link (what makes a link "ours"), and
// recording another client's pending attempt when Connect keeps meeting InProgress.
import BlueZ
import DBus

extension Peripheral {
    // MARK: - Ownership

    /// Whether this peripheral's connection holds the device's link, so that the session never
    /// lists it as a ``ForeignConnection``: a `connect(...)` attempt, link or `disconnect()` of
    /// ours is under way, a `Device1.Disconnect` of ours is unanswered, or (for a link, not a
    /// `pending` record) our Disconnect took the link down and BlueZ's `Connected = false`
    /// signal is still to come (bluetoothd emits it after answering).
    func claimsLink(pending: Bool) -> Bool {
        state.withLock { s in
            switch s.connection.phase {
            case .connecting, .connected, .disconnecting:
                return true
            case .unopened, .idle, .terminated:
                return !s.connection.deviceConnectedIsCurrent || (!pending && s.awaitingLinkDownSignal)
            }
        }
    }

    // MARK: - InProgress

    /// The `Connect` error to report once transient retries are exhausted: for
    /// `org.bluez.Error.InProgress` (another client's attempt holds the device), records the
    /// device with the session as a pending ``ForeignConnection`` and says so in the message.
    func connectFailure(_ error: BlueZError?) -> BlueZError {
        guard let error else { return BlueZError(kind: .failed, message: "Connect failed") }
        guard error.kind == .inProgress else { return error }
        session.foreignWatch.setPending(path, true)
        // The other client's link may be up already without bluetoothd having signalled it.
        session.refreshForeignLinks { [session] in session.foreignLinksMayHaveChanged() }
        return BlueZError(kind: .inProgress,
                          message: "\(error.message): another client's connection attempt holds the device; "
                              + "BluetoothSession.foreignConnections() lists it, closeForeignConnection(_:timeout:) cancels it",
                          operation: error.operation, path: error.path)
    }

    /// A `Connect` of ours is being sent: a pending record of the device is stale.
    func clearForeignPending() {
        if session.foreignWatch.setPending(path, false) { session.foreignLinksMayHaveChanged() }
    }
}

extension CentralManager {
    /// Whether a peripheral of this manager holds the link to `path` (see ``Peripheral/claimsLink(pending:)``).
    func claimsLink(_ path: ObjectPath, pending: Bool) -> Bool {
        inner.withLock { $0.peripherals[path] }?.claimsLink(pending: pending) ?? false
    }
}
