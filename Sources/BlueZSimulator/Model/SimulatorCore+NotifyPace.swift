// SimulatorCore+NotifyPace: a paced notification source, devices notifying at a steady rate
// (where `burst` sends as fast as possible), for measuring a client's cost per notification
// at the rate real sensors send.
import Foundation

// MARK: - Paced notifications

extension SimulatorCore {
    /// Fault: each peripheral of `addresses` notifies characteristic `uuid` `count` times at
    /// `hz` (value k = 4 little-endian bytes of k), the devices' sends spread evenly over each
    /// period. Driven by the clock: every tick sends what is due by then, so a late tick catches
    /// up and the rate holds. Targets are resolved at the start. Replaces a running source;
    /// returns the devices found (an unknown address or characteristic is left out).
    @discardableResult
    public func startNotifyPace(peripherals addresses: [String], characteristic uuid: String, hz: Double, count: Int) -> Int {
        stopNotifyPace()
        let sources = addresses.compactMap { address -> NotifyPace.Source? in
            guard let (peer, handle) = notifyingCharacteristic(address, uuid) else { return nil }
            return NotifyPace.Source(peer: peer, handle: handle, targets: notificationTargets(address, peer, handle))
        }
        let rate = max(hz, 0.001)
        let pace = NotifyPace(sources: sources, hz: rate, count: max(count, 0), start: clock.now)
        notifyPace = pace
        guard pace.total > 0 else { return sources.count }
        // One tick per send, at most 1,000 ticks a second (a tick then sends several).
        let interval = Duration.nanoseconds(max(Int64(1e9 / (rate * Double(sources.count))), 1_000_000))
        paceTick(pace)
        if pace.sent < pace.total {
            pace.timer = clock.repeating(every: interval) { [weak self] in
                guard let self, let pace = self.notifyPace else { return }
                self.paceTick(pace)
            }
        }
        return sources.count
    }

    /// Stops the paced source (what it sent so far stays in ``notifyPaceStatus``).
    public func stopNotifyPace() {
        notifyPace?.timer?.cancel()
        notifyPace?.timer = nil
    }

    /// The paced source's progress: values sent (over every device), deliveries made, and
    /// whether it is still sending. All zero and false when none was started.
    public var notifyPaceStatus: (sent: Int, delivered: Int, running: Bool) {
        guard let p = notifyPace else { return (0, 0, false) }
        return (p.sent, p.delivered, p.running)
    }

    /// Sends every value due by now; ends the source after its last.
    private func paceTick(_ pace: NotifyPace) {
        let due = pace.due(after: clock.now - pace.start)
        let n = pace.sources.count
        while pace.sent < due {
            let source = pace.sources[pace.sent % n]
            let bytes = withUnsafeBytes(of: UInt32(truncatingIfNeeded: pace.sent / n).littleEndian, Array.init)
            pace.delivered += source.targets.send(bytes)
            source.peer.setValue(bytes, handle: source.handle)
            pace.sent += 1
            if pace.sent > pace.total - n { source.targets.settle(bytes) }  // the device's last value
        }
        if pace.sent >= pace.total {
            pace.timer?.cancel()
            pace.timer = nil
        }
    }
}
