// VMSoakCentral: the central side of `make soak-vm` (Scripts/bluez-vm/steps/soak), a
// CentralManager cycling connect → discover → write the cycle number → subscribe → receive
// the 100 numbered notifications → disconnect against VMSoakPeripheral on real bluetoothd.
import BlueCapKit
import DBus
import Foundation
import Glibc
import TestSupport

enum VMSoakCentral {
    /// The run's figures, printed as the `summary` line the step script reads.
    struct Totals {
        var ok = 0, interrupted = 0, errors = 0, lost = 0, notifications = 0, recovered = 0
    }

    /// Cycles until `seconds` have passed (the cycle in flight then finishes), one line per cycle:
    /// `cycle N ok …`, `cycle N interrupted: …` (a bluetoothd restart during it or in the 60 s
    /// before it), `cycle N error: …` (failed with no restart near), `cycle N LOST: …` (a
    /// notification missing, duplicated, out of order or from another cycle). Exit status 1 when
    /// a cycle lost anything or a restart was never followed by a complete cycle.
    static func run(adapter: String, peripheralAdapter: String, seconds: Int) async -> Int32 {
        let rig: VMSoakCentralRig
        do { rig = try await VMSoakCentralRig(adapter: adapter, peripheralAdapter: peripheralAdapter) } catch {
            say("central: set-up failed: \(error)")
            return 1
        }
        let clock = ContinuousClock()
        let end = clock.now + .seconds(seconds)
        var totals = Totals()
        var recoveredDowns = 0
        var n: UInt32 = 0
        say("central: cycling for \(seconds) s against \(rig.peripheralAddress)")
        while clock.now < end {
            n += 1
            let start = clock.now
            let before = rig.watch.snapshot
            do {
                let count = try await rig.cycle(n)
                totals.ok += 1
                totals.notifications += count
                say("cycle \(n) ok \(count) notifications in \(format(clock.now - start)), VmRSS \(ProcessStats.residentKB()) kB")
                // A restart is recovered from by a complete cycle that began after bluetoothd was back.
                let downs = before.downs
                if downs > recoveredDowns && !before.isDown {
                    let since = rig.watch.snapshot.lastUp.map { format(clock.now - $0) } ?? "?"
                    say("restart \(downs) recovered: cycle \(n) complete \(since) after bluetoothd came back")
                    totals.recovered += downs - recoveredDowns
                    recoveredDowns = downs
                }
            } catch let failure as CycleFailure where failure.inexact {
                totals.lost += 1
                say("cycle \(n) LOST: \(failure.message)")
                await rig.cleanUp()
            } catch {
                let missing = (error as? CycleFailure)?.missing == true
                let kind: String
                if rig.watch.interfered(before: before, start: start) {
                    (kind, totals.interrupted) = ("interrupted", totals.interrupted + 1)
                } else if missing {
                    (kind, totals.lost) = ("LOST", totals.lost + 1)
                } else {
                    (kind, totals.errors) = ("error", totals.errors + 1)
                }
                say("cycle \(n) \(kind): \(error)")
                await rig.cleanUp()
            }
        }
        let downs = rig.watch.snapshot.downs
        say("summary ok=\(totals.ok) interrupted=\(totals.interrupted) errors=\(totals.errors) lost=\(totals.lost) "
            + "notifications=\(totals.notifications) restarts=\(downs) recovered=\(totals.recovered)")
        return totals.lost == 0 && totals.recovered == downs && totals.ok > 0 ? 0 : 1
    }

    static func format(_ d: Duration) -> String {
        String(format: "%.1f s", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }
}

/// Why a cycle failed: `inexact` (a duplicate, a reordering, another cycle's notification),
/// `missing` (fewer than 100 before the deadline), or neither (connect, discovery, write…).
struct CycleFailure: Error, CustomStringConvertible {
    var message: String
    var inexact = false
    var missing = false
    var description: String { message }
}
