// bluecap-soak: long-running reliability runs against a private bus + BlueZSimulator.
//
//   bluecap-soak cycles [--count N]         N connect/discover/read/disconnect cycles (default 1000)
//   bluecap-soak scan-storm [--duration S]  scan through an RSSI storm for S seconds (default 600)
//   bluecap-soak all [--count N] [--duration S]
//
// RSS (raw, and after malloc_trim gave the allocator's free pages back) and open file descriptors
// are sampled from /proc/self along the run and printed as a table; the run fails (exit 1) when
// any grows beyond its bound after warm-up.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

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
    case "all":
        let a = try await Soak.cycles(count: count).report()
        let b = try await Soak.scanStorm(seconds: duration).report()
        ok = a && b
    default:
        print("usage: bluecap-soak cycles [--count N] | scan-storm [--duration S] | all [--count N] [--duration S]")
        exit(2)
    }
} catch {
    print("soak: \(error)")
    exit(1)
}
exit(ok ? 0 : 1)
