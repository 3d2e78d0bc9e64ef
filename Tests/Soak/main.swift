// bluecap-soak: long-running reliability runs against a private bus + BlueZSimulator.
//
//   bluecap-soak cycles [--count N]         N connect/discover/read/disconnect cycles (default 1000)
//   bluecap-soak scan-storm [--duration S]  scan through an RSSI storm for S seconds (default 600)
//   bluecap-soak all [--count N] [--duration S]
//   bluecap-soak restarts [--count N]       N simulated bluetoothd restarts, each after a notify cycle
//   bluecap-soak vm-peripheral [--adapter hci1]    real bluetoothd (make soak-vm, in the VM): the
//   bluecap-soak vm-central [--adapter hci0] [--peripheral-adapter hci1] [--duration S]
//                                                  soak peripheral, and the central cycling against it
//
// RSS (raw, and after malloc_trim gave the allocator's free pages back) and open file descriptors
// are sampled from /proc/self along the run and printed as a table; the run fails (exit 1) when
// any grows beyond its bound after warm-up.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String, default value: String) -> String {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return value }
    return arguments[i + 1]
}

func option(_ name: String, default value: Int) -> Int {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count, let v = Int(arguments[i + 1]) else { return value }
    return v
}

let command = arguments.first ?? "all"
let count = option("--count", default: 1_000)
let duration = option("--duration", default: 600)
var ok = true

do {
    switch command {
    case "cycles":
        ok = try await Soak.cycles(count: count).report()
    case "scan-storm":
        ok = try await Soak.scanStorm(seconds: duration).report()
    case "restarts":
        ok = try await Soak.restarts(count: option("--count", default: 100)).report()
    case "vm-peripheral":
        exit(await VMSoakPeripheral.run(adapter: option("--adapter", default: "hci1")))
    case "vm-central":
        exit(await VMSoakCentral.run(adapter: option("--adapter", default: "hci0"),
                                     peripheralAdapter: option("--peripheral-adapter", default: "hci1"),
                                     seconds: option("--duration", default: 1_800)))
    case "all":
        let a = try await Soak.cycles(count: count).report()
        let b = try await Soak.scanStorm(seconds: duration).report()
        ok = a && b
    default:
        print("usage: bluecap-soak cycles [--count N] | scan-storm [--duration S] | all [--count N] [--duration S] | restarts [--count N] | vm-peripheral | vm-central")
        exit(2)
    }
} catch {
    print("soak: \(error)")
    exit(1)
}
exit(ok ? 0 : 1)
