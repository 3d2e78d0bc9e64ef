// The code of README.md (ReadmeSnippets.swift, verbatim), run against the simulator so the
// README cannot drift from the API, and the check that README.md holds each block as is.

import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import Synchronization
import TestSupport

// MARK: - The snippets, run

@Suite("README snippets", .serialized)
struct ExamplesReadmeSnippetTests {
    /// A private bus, a simulator with two adapters, the README peripheral on hci1 and a central on hci0.
    static func world(_ body: @escaping @Sendable (CentralManager, MutableService) async throws -> Void) async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
        defer { simulator.stop() }
        let peripheralManager = PeripheralManager(adapter: "hci1", session: bus.session())
        let service = try await withDeadline(.seconds(10), "serveAccelerometer") { try await serveAccelerometer(on: peripheralManager).value }
        // The peripheral's sampling loop: a timer that sends while Enabled is 1.
        let step = Counter()
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "readme.peripheral"))
        timer.schedule(deadline: .now(), repeating: .milliseconds(20))
        timer.setEventHandler {
            guard service.characteristic(TISensorTag.AccelerometerService.Enabled.uuid)?.value == Data([1]) else { return }
            let a = Double(step.next()) * 0.1
            _ = sendSample(service, x: sin(a), y: 0, z: cos(a))
        }
        timer.resume()
        defer { timer.cancel() }
        let central = CentralManager(adapter: "hci0", session: bus.session())
        defer { central.reset() }
        try await body(central, service)
        await withDeadlineOrNil { _ = try? await peripheralManager.shutdown().value }
    }

    @Test("the README's futures central streams samples from the README's peripheral")
    func futuresCentral() async throws {
        try await Self.world { central, _ in
            let samples = collect(accelerometerSamples(manager: central))
            let got = try await samples.wait(for: 3, timeout: .seconds(15))
            #expect(got.count >= 3)
            #expect(got.allSatisfy { abs($0.x) <= 1.01 && abs($0.z) <= 1.01 })
            #expect(Set(got.prefix(3).map(\.xRaw)).count > 1, "the samples move")
        }
    }

    @Test("the README's async/await central reads samples and leaves the sensor enabled")
    func asyncCentral() async throws {
        try await Self.world { central, service in
            let samples = try await withDeadline(.seconds(15), "readSamples") { try await readSamples(manager: central, count: 3) }
            #expect(samples.count == 3)
            #expect(service.characteristic(TISensorTag.AccelerometerService.Enabled.uuid)?.value == Data([1]))
        }
    }

    @Test("the README's binding snippet reads the simulated battery and follows its notifications")
    func profileBinding() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let tag = "C0:FF:EE:00:00:08"
        h.simulator.add(simulatedSensorTag(tag).service("180F") {
            $0.characteristic("2A19", flags: [.read, .notify], value: Data([64]))
            $0.characteristic("2A29", flags: [.read], value: Data("Texas Instruments".utf8))
        })
        let peripheral = try await h.discover(tag)
        let events = h.connect(peripheral)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        let (battery, changes) = try await withDeadline(.seconds(10), "followBattery") {
            let (battery, changes) = try await followBattery(peripheral)
            return (battery.$level, changes)
        }
        #expect(battery.wrappedValue == 64)
        let seen = collect(changes)
        #expect(h.simulator.notify(peripheral: tag, characteristic: "2A19", value: Data([63])) == 1)
        _ = try await seen.wait(for: 3, timeout: .seconds(5))  // the two reads, then the notification
        #expect(battery.wrappedValue == 63)
    }

    @Test("the README's profile and simulator snippets do what they say")
    func profileAndSimulator() async throws {
        #expect(try batteryExample() == 87)
        try await withSimulatedSensorTag { manager, _ in
            try await manager.whenPoweredOn().value
            let found = try await withDeadline(.seconds(10), "scan") {
                try await manager.startScanning(forServiceUUIDs: [TISensorTag.AccelerometerService.uuid]).first().value
            }
            manager.stopScanning()
            #expect(found.name == "SensorTag")
            #expect(found.address == "C0:FF:EE:00:00:01")
        }
    }
}

/// Numbers steps for the sampling timer.
private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

// MARK: - README.md holds these blocks verbatim

@Suite("README.md")
struct ReadmeTextTests {
    @Test("every `// README:` block of ReadmeSnippets.swift appears verbatim in README.md")
    func readmeHoldsTheCompiledSnippets() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here.deletingLastPathComponent().appendingPathComponent("ReadmeSnippets.swift"), encoding: .utf8)
        var blocks: [(name: String, text: String)] = []
        var current: (name: String, lines: [String])?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line == "// README: end", let c = current {
                blocks.append((c.name, c.lines.joined(separator: "\n")))
                current = nil
            } else if line.hasPrefix("// README: ") {
                current = (String(line.dropFirst("// README: ".count)), [])
            } else if current != nil {
                current!.lines.append(line)
            }
        }
        #expect(blocks.count == 9)
        for block in blocks {
            #expect(readme.contains("```swift\n" + block.text + "\n```"), "README.md lacks the \(block.name) snippet as compiled here")
        }
    }
}
