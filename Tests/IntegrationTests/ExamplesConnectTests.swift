// central-scanner --connect ADDRESS as a process: against accelerometer-peripheral on a simulated
// bluetoothd with and without --experimental, with --simulate, and its errors.
import BlueZSimulator
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Examples: central-scanner --connect", .serialized)
struct ExamplesConnectTests {
    static let service = "f000aa10-0451-4000-b000-000000000000"
    static let characteristics: Set<String> = ["f000aa11-0451-4000-b000-000000000000", "f000aa12-0451-4000-b000-000000000000",
                                              "f000aa13-0451-4000-b000-000000000000"]

    /// The accelerometer service and its three characteristics, with their properties, among `events`.
    static func checkAccelerometer(_ events: [[String: Any]]) {
        let services = events.filter { $0["event"] as? String == "service" }.compactMap { $0["uuid"] as? String }
        #expect(services.contains(service), "events: \(events)")
        let chars = events.filter { $0["event"] as? String == "characteristic" && $0["service"] as? String == service }
        #expect(Set(chars.compactMap { $0["uuid"] as? String }) == characteristics, "events: \(events)")
        let data = chars.first { $0["uuid"] as? String == "f000aa11-0451-4000-b000-000000000000" }
        let properties = Set(data?["properties"] as? [String] ?? [])
        #expect(properties.isSuperset(of: ["read", "notify"]), "data: \(String(describing: data))")
    }

    @Test("--connect ADDRESS --json connects accelerometer-peripheral never scanned (ConnectDevice with -E, a discovery without), prints its services and characteristics, exits 0",
          arguments: [false, true])
    func connectsAndListsServices(experimental: Bool) async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2, experimental: experimental)
        defer { simulator.stop() }
        let peripheral = try ExampleProcess("accelerometer-peripheral", ["--adapter", "hci1", "--json"], bus: bus.address)
        try await peripheral.waitLine("advertising") { ExampleProcess.parse($0)?["advertising"] as? Bool == true }
        let address = try need(simulator.adapterAddress(1), "hci1's address")
        #expect(simulator.sync { $0.devicePaths(adapter: 0) }.isEmpty)
        let scanner = try ExampleProcess("central-scanner", ["--connect", address.lowercased(), "--adapter", "hci0", "--json"], bus: bus.address)
        #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "stderr: \(scanner.stderr)")
        Self.checkAccelerometer(scanner.events)
        #expect(scanner.events.last?["event"] as? String == "disconnected", "events: \(scanner.events)")
        #expect(simulator.sync { $0.discoveryClients(adapter: 0) }.isEmpty)
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(10)) == 0)
    }

    @Test("--connect against a bluetoothd that never signals Connected (5.66 with btvirt): the link is down when the example exits")
    func linkDownWithoutConnectedSignal() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        simulator.setConnectedSignalWithheld(true)
        let peripheral = try ExampleProcess("accelerometer-peripheral", ["--adapter", "hci1", "--json"], bus: bus.address)
        try await peripheral.waitLine("advertising") { ExampleProcess.parse($0)?["advertising"] as? Bool == true }
        let address = try need(simulator.adapterAddress(1), "hci1's address")
        let scanner = try ExampleProcess("central-scanner", ["--connect", address, "--adapter", "hci0", "--json"], bus: bus.address)
        #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "stderr: \(scanner.stderr)")
        #expect(scanner.events.last?["event"] as? String == "disconnected", "events: \(scanner.events)")
        // `connect()` on a link BlueZ never reported asks BlueZ again; the example waits for that
        // answer before `disconnect()`, which then takes the link down before the example exits.
        let device = try need(simulator.sync { $0.devicePaths(adapter: 0) }.first, "hci0's device")
        #expect(simulator.sync { $0.store.property(device, "org.bluez.Device1", "Connected") } == .bool(false),
                "the link is still up after the example said disconnected; stderr: \(scanner.stderr)")
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(10)) == 0)
    }

    @Test("--simulate --connect the simulated SensorTag's address works on a machine without Bluetooth")
    func simulated() async throws {
        let scanner = try ExampleProcess("central-scanner", ["--simulate", "--connect", "00:B1:0E:5C:00:01", "--json"], bus: "unix:path=/nonexistent")
        #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "stderr: \(scanner.stderr)")
        let simulating = scanner.events.first { $0["event"] as? String == "simulating" }
        #expect(simulating?["peripheralAddress"] as? String == "00:B1:0E:5C:00:01")
        Self.checkAccelerometer(scanner.events)
    }

    @Test("an address not heard within --timeout: exit 1 and an error naming the address, the adapter and ConnectDevice")
    func notHeard() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1)
        defer { simulator.stop() }
        let scanner = try ExampleProcess("central-scanner", ["--connect", "C0:FF:EE:00:00:42", "--timeout", "1", "--json"], bus: bus.address)
        #expect(try await scanner.exitCode(within: .seconds(20)) == 1)
        #expect(scanner.stderr.contains("C0:FF:EE:00:00:42") && scanner.stderr.contains("hci0") && scanner.stderr.contains("ConnectDevice"),
                "stderr: \(scanner.stderr)")
        #expect(!scanner.events.contains { $0["event"] as? String == "service" })
    }

    @Test("a bad address, a mode mixed in, or --timeout without --connect: exit 64")
    func usageErrors() async throws {
        let cases = [["--connect", "C0:FF:EE:00:00"], ["--connect", "C0:FF:EE:00:00:0G"], ["--connect"],
                     ["--connect", "C0:FF:EE:00:00:01", "--accelerometer"], ["--connect", "C0:FF:EE:00:00:01", "--service", "180D"],
                     ["--timeout", "5"], ["--connect", "C0:FF:EE:00:00:01", "--address-type", "static"]]
        for args in cases {
            let p = try ExampleProcess("central-scanner", args, bus: "unix:path=/nonexistent")
            #expect(try await p.exitCode(within: .seconds(10)) == 64, "\(args): \(p.stderr)")
        }
    }
}
