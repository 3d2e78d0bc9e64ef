// SimulatorCore+ATTTimeout: a peer that leaves a request unanswered, as bluetoothd meets it. ATT
// allows one request at a time: the unanswered one holds every GATT request after it until the
// ATT transaction timeout; then bluetoothd closes the bearer and answers every GATT call
// "Not connected" while the link (and `Device1.Connected`) stays up until it drops a little later.
// Seen with a Bumble peer on bluetoothd 5.66 and 5.82 (Scripts/bluez-vm, steps/thirdparty).

import Timing

// MARK: - The ATT bearer of a link

extension SimulatorCore {
    /// What bluetoothd answers the requests that waited for an unanswered one when the ATT
    /// timeout closes the bearer: `Failed` "Operation failed with ATT error: 0x0e" (5.66 with a
    /// Bumble peer: the read queued behind the silent one, 30.08 s after it). Calls made from then
    /// on are answered "Not connected".
    static var attTimeoutReply: BlueZErrorReply { ATTError.unlikelyError.clientReply }

    /// A GATT request on `device`: false when it may go to the peer; true when the bearer holds
    /// it (an unanswered request is outstanding: `fail` runs at the ATT timeout).
    func attHolds(_ device: DeviceState, _ fail: @escaping (BlueZErrorReply) -> Void) -> Bool {
        guard device.attTimer != nil, !device.attClosed else { return false }
        device.attHeld.append(fail)
        return true
    }

    /// The peer leaves this request unanswered: it is held with what waits behind it, and the
    /// ATT timeout (``attTimeout``) starts.
    func holdUnanswered(_ device: DeviceState, _ fail: @escaping (BlueZErrorReply) -> Void) {
        device.attHeld.append(fail)
        guard device.attTimer == nil else { return }
        device.attTimer = clock.schedule(after: attTimeout) { [weak self, weak device] in
            guard let self, let device, device.link == .connected, !device.attClosed else { return }
            self.attTimedOut(device)
        }
    }

    /// The ATT timeout passed: the held requests fail, the bearer is closed (GATT calls fail
    /// "Not connected", `Connected` stays true), the link drops ``linkDropAfterATTTimeout`` later.
    private func attTimedOut(_ device: DeviceState) {
        device.attClosed = true
        let held = device.attHeld
        device.attHeld = []
        for fail in held { fail(Self.attTimeoutReply) }
        device.attTimer = clock.schedule(after: linkDropAfterATTTimeout) { [weak self, weak device] in
            guard let self, let device, device.attClosed else { return }
            self.linkLost(device, reason: .failed("le-connection-abort-by-remote"))
        }
    }

    /// The link is down: its bearer with it. What still waited fails "Not connected".
    func attLinkEnded(_ device: DeviceState) {
        device.attTimer?.cancel()
        device.attTimer = nil
        device.attClosed = false
        let held = device.attHeld
        device.attHeld = []
        for fail in held { fail(.failed("Not connected")) }
    }
}
