// The scan path's work per RSSI update does not grow with the number of devices: counted, not
// timed (PathWorkProbe counts path hashes, comparisons and observer visits on the owner thread).
import BlueCapKit
import BlueZSimulator
@_spi(Testing) import DBus
import Foundation
import Locking
import Testing
import TestSupport

@Suite("Scan work per event", .serialized, .timeLimit(.minutes(2)))
struct ScanWorkPerEventTests {
    /// What one scan delivered, and the work counted while it delivered `updates` RSSI updates.
    struct Measured {
        let perUpdate: (hashes: Double, comparisons: Double, visits: Double)
        let counts: PathWorkProbe.Counts
        /// The addresses the scan reported during the counted updates, in order.
        let reported: [String]
        /// The addresses the updates were sent to, in order.
        let sent: [String]
    }

    /// The address of device `n` (0…65535).
    static func address(_ n: Int) -> String { String(format: "D0:C0:00:00:%02X:%02X", n >> 8, n & 0xFF) }

    /// A scan (`allowDuplicates`) over `devices` devices that have all been reported once, then
    /// one more update that starts the count on the owner thread (in the scan's subscriber, which
    /// runs there), `updates` lone RSSI changes spread over the devices, the last of which stops
    /// it. The count covers the rest of the first update and the start of the last: `updates`
    /// updates' work in all.
    func measure(devices: Int, updates: Int) async throws -> Measured {
        let h = try await CentralRig.start()
        defer {
            PathWorkProbe.stop()
            h.stop()
        }
        for n in 0..<devices {
            h.simulator.add(.spec(address: Self.address(n)).addressType(.random).name("work-\(n)").rssi(-50))
        }
        struct Window {
            var seen = 0
            var distinct: Set<String> = []
            var reported: [String] = []
            var counts: PathWorkProbe.Counts?
        }
        let window = Locked(Window())
        let warmed = Collector<Int>()
        let done = Collector<PathWorkProbe.Counts>()
        let armAt = devices + 1  // every device once, then the update that starts the count
        let stream = h.manager.startScanning(capacity: 4096, options: ScanOptions(allowDuplicates: true))
        stream.onSuccess(context: .immediate) { p in
            let (seen, distinct) = window.withLock { w -> (Int, Int) in
                w.seen += 1
                w.distinct.insert(p.address)
                if w.seen > armAt { w.reported.append(p.address) }
                return (w.seen, w.distinct.count)
            }
            if seen == devices, distinct == devices { warmed.append(seen) }
            if seen == armAt { PathWorkProbe.countOnCurrentThread() }
            if seen == armAt + updates { done.append(PathWorkProbe.stop()) }
        }
        try await warmed.wait(for: 1, timeout: .seconds(60))
        // Each update moves a device's RSSI by 20 dBm (bluetoothd reports changes of 8 dBm or more).
        var sent: [String] = []
        for k in 0...updates {
            let address = Self.address(k % devices)
            let rssi: Int16 = (k / devices) % 2 == 0 ? -70 : -50
            h.simulator.updatePeripheral(address) { $0.rssi = rssi }
            if k > 0 { sent.append(address) }
        }
        let counts = try await done.wait(for: 1, timeout: .seconds(30))[0]
        let reported = window.withLock { $0.reported }
        let n = Double(updates)
        return Measured(perUpdate: (Double(counts.hashes) / n, Double(counts.comparisons) / n, Double(counts.visits) / n),
                        counts: counts, reported: reported, sent: sent)
    }

    @Test("an RSSI update costs the same path work and observer visits with 1 and with 1,000 devices, and each is reported in order")
    func workPerUpdateIsFlat() async throws {
        let updates = 200
        let one = try await measure(devices: 1, updates: updates)
        let many = try await measure(devices: 1000, updates: updates)
        // Same events, same order, whatever the number of devices.
        #expect(one.reported == one.sent)
        #expect(many.reported == many.sent)
        // The count ran on the owner thread: every update is found by its path at least once.
        #expect(one.perUpdate.hashes >= 1, "\(one.counts)")
        // Lookups by path: the same number per update (one hash each). A dictionary lookup
        // compares its key with the entries it probes: one or two in a small table, on average
        // fewer than four more in one of 1,000 entries (at most three-quarters full); a linear
        // search would compare it with hundreds.
        #expect(many.perUpdate.hashes == one.perUpdate.hashes, "1 device: \(one.counts); 1,000: \(many.counts)")
        // Three of them: the tree's cache, the manager's peripheral and the scan's reported set
        // (which a scan with allowDuplicates still keeps: a discovery (re)start reports only the
        // known devices not reported yet).
        #expect(one.perUpdate.hashes == 3, "\(one.counts)")
        #expect(many.perUpdate.comparisons <= one.perUpdate.comparisons + 4 * one.perUpdate.hashes + 2,
                "1 device: \(one.counts); 1,000: \(many.counts)")
        #expect(many.perUpdate.visits == one.perUpdate.visits, "1 device: \(one.counts); 1,000: \(many.counts)")
    }
}
