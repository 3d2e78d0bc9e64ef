// central-scanner's adapter flags as a process against the simulator: --list-adapters,
// --adapter all, --passive.

import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("central-scanner adapter flags", .serialized)
struct ExamplesAdapterFlagsTests {
    @Test("--list-adapters --json prints one object per adapter with its address, flags and monitoring support")
    func listAdapters() async throws {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 3, experimental: true)
        defer { simulator.stop(); bus.stop() }
        simulator.setPowered(adapter: 2, false)
        let p = try ExampleProcess("central-scanner", ["--list-adapters", "--json"], bus: bus.address)
        #expect(try await p.exitCode(within: .seconds(20)) == 0)
        let adapters = p.lines.items.compactMap(ExampleProcess.parse).filter { $0["event"] as? String == "adapter" }
        #expect(adapters.map { $0["name"] as? String } == ["hci0", "hci1", "hci2"])
        #expect(adapters.map { $0["address"] as? String } == (0..<3).map { simulator.adapterAddress($0) })
        #expect(adapters.map { $0["powered"] as? Bool } == [true, true, false])
        #expect(adapters.allSatisfy { $0["monitoring"] as? Bool == true })
    }

    @Test("--adapter all scans on every powered adapter and tags each line; --passive reports a device found by manufacturer data")
    func allAndPassive() async throws {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2, experimental: true)
        defer { simulator.stop(); bus.stop() }
        simulator.add(.spec(address: "C0:FF:EE:00:00:71").rssi(-60).manufacturerData(id: 0x0059, data: Data([0x01, 0x02])), inRangeOf: [0, 1])
        simulator.add(.spec(address: "C0:FF:EE:00:00:72").rssi(-60).manufacturerData(id: 0x0059, data: Data([0x09])), inRangeOf: [1])
        let all = try ExampleProcess("central-scanner", ["--adapter", "all", "--duration", "2", "--json"], bus: bus.address)
        #expect(try await all.exitCode(within: .seconds(20)) == 0)
        let seen = Set(all.lines.items.compactMap(ExampleProcess.parse).filter { $0["event"] as? String == "discovered" }
            .map { "\($0["adapter"] as? String ?? "?") \($0["address"] as? String ?? "?")" })
        #expect(seen == ["hci0 C0:FF:EE:00:00:71", "hci1 C0:FF:EE:00:00:71", "hci1 C0:FF:EE:00:00:72"])

        let passive = try ExampleProcess("central-scanner", ["--passive", "ff:590001", "--adapter", "hci1", "--duration", "3", "--json"],
                                         bus: bus.address)
        #expect(try await passive.exitCode(within: .seconds(20)) == 0)
        let found = passive.lines.items.compactMap(ExampleProcess.parse).filter { $0["event"] as? String == "found" }
            .map { $0["address"] as? String }
        #expect(found == ["C0:FF:EE:00:00:71"])
    }
}
