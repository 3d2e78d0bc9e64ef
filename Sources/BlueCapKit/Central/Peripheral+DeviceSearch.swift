// Peripheral+DeviceSearch: a connection attempt whose device object bluetoothd removed looks for
// the device and connects once its object is back.
import BlueZ
import DBus

extension Peripheral {
    // MARK: - Waiting for the device object

    /// The device object is gone while `attempt` runs (removed by bluetoothd after the link
    /// dropped: an unpaired device it no longer hears; or another client's `RemoveDevice`):
    /// the manager looks for the device (a discovery for its address) until its object is back
    /// (``deviceObjectBack()``), the attempt ends, or the attempt's timer fires (`.timeout`).
    func awaitDevice(attempt: Int) {
        let (started, present) = state.withLock { s -> (Bool, Bool) in
            guard s.connection.phase == .connecting(attempt: attempt), s.awaitingDevice == nil else { return (false, false) }
            s.awaitingDevice = attempt
            // bluetoothd drops a pending Connect unanswered with the object: its late answer
            // (our D-Bus timeout) is stale.
            s.connectCall += 1
            return (true, s.objectPresent)
        }
        guard started else { return }
        BlueZLog.debug("\(identifier): no device object; looking for \(discoveredAddress) while attempt \(attempt) runs")
        deviceSearch(self, true)
        // Back already (an UnknownObject answer that crossed the object's return).
        if present { deviceObjectBack() }
    }

    /// The device object appeared (owner thread): the attempt waiting for it sends `Connect`.
    func deviceObjectBack() {
        let resume = state.withLock { s -> (attempt: Int, timeout: Duration)? in
            guard let attempt = s.awaitingDevice, s.objectPresent else { return nil }
            s.awaitingDevice = nil
            guard s.connection.phase == .connecting(attempt: attempt) else { return nil }
            return (attempt, s.connection.policy.connectionTimeout)
        }
        guard let resume else { return }
        BlueZLog.debug("\(identifier): the device object is back; connecting (attempt \(resume.attempt))")
        deviceSearch(self, false)
        slotGranted(attempt: resume.attempt, timeout: resume.timeout)
    }

    /// Called by `feed` after each transition (outside the lock): an attempt that waited for the
    /// device and is over (connected, timed out, cancelled, terminated) ends the search.
    func endDeviceSearchIfAttemptOver() {
        let ended = state.withLock { s -> Bool in
            guard let attempt = s.awaitingDevice, s.connection.phase != .connecting(attempt: attempt) else { return false }
            s.awaitingDevice = nil
            return true
        }
        if ended { deviceSearch(self, false) }
    }
}
