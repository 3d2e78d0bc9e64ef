// accelerometer-peripheral --json says what it advertises: an {"event":"advertisement",…} line
// with the properties, the bytes against the adapter's limits and the instances, run as a process
// against the simulator.
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Examples: accelerometer-peripheral shows what it advertises", .serialized)
struct ExamplesAdvertisingEventTests {
    @Test("--json prints an advertisement event: name, service UUID, tx-power, 24 of 31 bytes, one instance active")
    func testPeripheralJSON_PrintsAdvertisement() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let p = try ExampleProcess("accelerometer-peripheral", ["--adapter", "hci1", "--json", "--name", "Adv"], bus: bus.address)
        let line = try await p.waitLine("advertisement") { ExampleProcess.parse($0)?["event"] as? String == "advertisement" }
        p.send(SIGINT)
        _ = try await p.exitCode(within: .seconds(15))
        let e = try #require(ExampleProcess.parse(line))
        #expect(e["type"] as? String == "peripheral")
        #expect(e["localName"] as? String == "Adv")
        #expect(e["serviceUUIDs"] as? [String] == ["f000aa10-0451-4000-b000-000000000000"])
        #expect(e["includes"] as? [String] == ["tx-power"])
        #expect(e["discoverable"] as? Bool == true)
        // Flags 3 + tx power 3 + one 128-bit UUID list 18; the name (2 + 3) in the scan response.
        #expect(e["advertisingDataBytes"] as? Int == 24)
        #expect(e["advertisingDataLimit"] as? Int == 31)
        #expect(e["scanResponseBytes"] as? Int == 5)
        #expect(e["activeInstances"] as? Int == 1)
        #expect(e["freeInstances"] as? Int == 4)
    }
}
