// NotifyPace: the state of a paced notification source (SimulatorCore+NotifyPace).
import Timing

// MARK: - NotifyPace

/// Devices notifying one characteristic at a steady rate each, their sends spread evenly over
/// each period (device i of n sends its k-th value at (k + i/n) / hz after the start).
final class NotifyPace {
    /// A device of the source: its peripheral, the characteristic, where its values go.
    struct Source {
        let peer: PeripheralPeer
        let handle: UInt16
        let targets: NotificationTargets
    }

    let sources: [Source]
    let hz: Double
    /// Values per device.
    let count: Int
    let start: Duration
    /// Values sent so far, over every device (send j is device j % n's value j / n).
    var sent = 0
    /// Deliveries made (a value reaching two centrals counts twice).
    var delivered = 0
    var timer: ClockTask?

    init(sources: [Source], hz: Double, count: Int, start: Duration) {
        self.sources = sources
        self.hz = hz
        self.count = count
        self.start = start
    }

    var total: Int { sources.count * count }
    var running: Bool { timer != nil }

    /// How many sends are due `elapsed` after the start (the first at once).
    func due(after elapsed: Duration) -> Int {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(total, Int((seconds * hz * Double(sources.count)).rounded(.down)) + 1)
    }
}
