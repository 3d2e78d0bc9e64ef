// bluez-sim: the BlueZSimulator on a D-Bus bus, until SIGINT/SIGTERM.
//
//   bluez-sim --address <bus address> [--adapters N] [--scenario FILE.json]
//   bluez-sim --print-address [--adapters N] [--scenario FILE.json]
//
// --print-address starts a private dbus-daemon, prints its address on stdout (one line), and
// serves org.bluez on it.

import BlueZSimulator
import DBus
import Dispatch
import Foundation
import Glibc

// MARK: - Arguments

let usage = """
    usage: bluez-sim (--address <bus address> | --print-address) [--adapters N] [--scenario FILE.json]
      --address A       serve org.bluez on the D-Bus bus at address A
      --print-address   start a private dbus-daemon, print its address, serve org.bluez on it
      --adapters N      number of simulated adapters hci0… (default 2)
      --scenario FILE   JSON scenario of simulated peripherals (see BlueZSimulator.Scenario)
    """

func fail(_ message: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("bluez-sim: \(message)\n\(usage)\n".utf8))
    exit(code)
}

var address: String?
var printAddress = false
var adapters: Int?
var scenarioPath: String?
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--address": guard let v = args.popFirst() else { fail("--address needs a value") }; address = v
    case "--print-address": printAddress = true
    case "--adapters":
        guard let v = args.popFirst(), let n = Int(v), (1...16).contains(n) else { fail("--adapters needs a number from 1 to 16") }
        adapters = n
    case "--scenario": guard let v = args.popFirst() else { fail("--scenario needs a file") }; scenarioPath = v
    case "-h", "--help": print(usage); exit(0)
    default: fail("unknown argument \(a)")
    }
}
guard (address == nil) != !printAddress else { fail("give exactly one of --address and --print-address") }

var scenario: Scenario?
if let scenarioPath {
    guard let data = FileManager.default.contents(atPath: scenarioPath) else { fail("cannot read \(scenarioPath)") }
    do { scenario = try Scenario.decode(data) } catch { fail("bad scenario \(scenarioPath): \(error)") }
    for p in scenario?.peripherals ?? [] {
        do { _ = try p.peripheral } catch { fail("bad scenario \(scenarioPath): \(error)") }
    }
}

// MARK: - Run

/// Blocks SIGINT/SIGTERM's default action and returns sources that signal `semaphore`.
nonisolated func watchTermination(_ semaphore: DispatchSemaphore) -> [DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { sig in
        signal(sig, SIG_IGN)
        let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        s.setEventHandler { semaphore.signal() }
        s.resume()
        return s
    }
}

/// Waits (off the main actor) until `semaphore` is signalled.
nonisolated func waitForTermination(_ semaphore: DispatchSemaphore) async {
    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            semaphore.wait()
            c.resume()
        }
    }
}

let stopSignal = DispatchSemaphore(value: 0)
let sources = watchTermination(stopSignal)

var daemon: BusDaemon?
if printAddress {
    do { daemon = try BusDaemon() } catch { fail("cannot start dbus-daemon: \(error)", code: 1) }
    address = daemon!.address
}

let simulator: BlueZSimulator
do {
    simulator = try await BlueZSimulator.start(busAddress: address!, adapters: adapters ?? scenario?.adapters ?? 2)
} catch {
    daemon?.stop()
    fail("cannot serve org.bluez on \(address!): \(error)", code: 1)
}
if let scenario { simulator.load(scenario) }
if printAddress {
    FileHandle.standardOutput.write(Data((address! + "\n").utf8))
}
await waitForTermination(stopSignal)
simulator.stop()
daemon?.stop()
_ = sources
