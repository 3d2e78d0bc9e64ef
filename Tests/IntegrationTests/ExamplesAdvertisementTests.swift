// central-scanner --json prints the whole advertisement (raw AD structures, flags, address type,
// appearance, TX power, service data) next to its original keys, run as a process against the
// simulator.
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Examples: central-scanner --json advertisement keys", .serialized)
struct ExamplesAdvertisementTests {
    /// Runs `central-scanner --json --duration 2` against a simulator imitating `profile` with
    /// AdvertisementDataTests' sensor in range; returns the sensor's first discovered event.
    private func discovered(profile: BlueZProfile) async throws -> [String: Any] {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1, profile: profile)
        defer { simulator.stop() }
        simulator.add(AdvertisementDataTests.sensor)
        let scanner = try ExampleProcess("central-scanner", ["--adapter", "hci0", "--json", "--duration", "2"], bus: bus.address)
        let code = try await scanner.exitCode(within: .seconds(20))
        #expect(code == 0, "stderr: \(scanner.stderr)")
        let event = scanner.events.first { $0["event"] as? String == "discovered" && $0["address"] as? String == AdvertisementDataTests.address }
        return try #require(event, "stdout: \(scanner.lines.items)")
    }

    @Test("on 5.82 a discovered event keeps its keys and adds advertisingData, adStructures, flags, addressType, appearance, txPower, serviceData")
    func testScannerJSON_WhenBlueZ582_PrintsWholeAdvertisement() async throws {
        let e = try await discovered(profile: .bluez5_82)
        // The original keys, unchanged.
        #expect(e["name"] as? String == "Sensor")
        #expect(e["rssi"] as? Int == -50)
        #expect(Set((e["uuids"] as? [String] ?? []).map { $0.uppercased() })
                == ["0000180F-0000-1000-8000-00805F9B34FB", "F000AA10-0451-4000-B000-000000000000"])
        #expect(e["manufacturerData"] as? [String: String] == ["1177": "051234"])
        // The new ones.
        #expect(e["advertisingData"] as? [String: String] == ["0x30": Data("Kitchen".utf8).map { String(format: "%02x", $0) }.joined()])
        #expect(e["flags"] as? Int == 6)
        #expect(e["flagNames"] as? [String] == ["leGeneralDiscoverable", "brEdrNotSupported"])
        #expect(e["addressType"] as? String == "random")
        #expect(e["appearance"] as? Int == 0x0341)
        #expect(e["txPower"] as? Int == -4)
        #expect((e["serviceData"] as? [String: String])?.values.first == "400164")
        let structures = e["adStructures"] as? [String: [String]] ?? [:]
        #expect(structures["0x16"] == ["d2fc400164"])
        #expect(structures["0xFF"] == ["9904051234"])
        #expect(structures["0x01"] == ["06"])
        #expect(structures["0x03"] == ["0f18"])
    }

    @Test("on 5.66 without --experimental advertisingData and flags are null: bluetoothd exports neither")
    func testScannerJSON_WhenExperimentalOff_PrintsNull() async throws {
        let e = try await discovered(profile: .bluez5_66)
        #expect(e["advertisingData"] is NSNull)
        #expect(e["flags"] is NSNull)
        #expect(e["addressType"] as? String == "random")
        #expect((e["adStructures"] as? [String: [String]])?["0x16"] == ["d2fc400164"])
    }
}
