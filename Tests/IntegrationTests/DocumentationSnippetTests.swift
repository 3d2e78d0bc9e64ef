// The code of README.md and of the DocC articles (DocumentationSnippets.swift, verbatim), run
// against the simulator so the documentation cannot drift from the API, and the check that each
// markdown file holds its blocks as they are compiled.

import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import Synchronization
import TestSupport

// MARK: - The snippets, run

@Suite("Documentation snippets", .serialized)
struct DocumentationSnippetTests {
    /// A private bus, a simulator with two adapters, the documented peripheral on hci1 and a central on hci0.
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

    @Test("the futures central streams samples from the documented peripheral")
    func futuresCentral() async throws {
        try await Self.world { central, _ in
            let samples = collect(accelerometerSamples(manager: central))
            let got = try await samples.wait(for: 3, timeout: .seconds(15))
            #expect(got.count >= 3)
            #expect(got.allSatisfy { abs($0.x) <= 1.01 && abs($0.z) <= 1.01 })
            #expect(Set(got.prefix(3).map(\.xRaw)).count > 1, "the samples move")
        }
    }

    @Test("the async/await central reads samples and leaves the sensor enabled")
    func asyncCentral() async throws {
        try await Self.world { central, service in
            let samples = try await withDeadline(.seconds(15), "readSamples") { try await readSamples(manager: central, count: 3) }
            #expect(samples.count == 3)
            #expect(service.characteristic(TISensorTag.AccelerometerService.Enabled.uuid)?.value == Data([1]))
        }
    }

    @Test("the service-model binding reads the simulated battery and follows its notifications")
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

    @Test("the service-model and simulator snippets do what they say")
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

// MARK: - The markdown files hold these blocks verbatim

/// One `// snippet:` block of DocumentationSnippets.swift: its name, the files (relative to the
/// package root) that show it, and its text.
struct DocumentationSnippet {
    let name: String
    let files: [String]
    let text: String

    /// The blocks of DocumentationSnippets.swift, in order. Throws on a block opened inside
    /// another, an `end` with no block open, a block never closed or one that names no file.
    static func all() throws -> [DocumentationSnippet] {
        let source = try String(contentsOf: packageRoot.appendingPathComponent("Tests/IntegrationTests/DocumentationSnippets.swift"),
                                encoding: .utf8)
        var blocks: [DocumentationSnippet] = []
        var open: (name: String, files: [String], lines: [String])?
        for (number, line) in source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).enumerated() {
            if line == "// snippet: end" {
                guard let o = open else { throw SnippetFileError(line: number + 1, problem: "an end with no snippet open") }
                blocks.append(DocumentationSnippet(name: o.name, files: o.files, text: o.lines.joined(separator: "\n")))
                open = nil
            } else if line.hasPrefix("// snippet: ") {
                guard open == nil else { throw SnippetFileError(line: number + 1, problem: "a snippet opened inside \(open!.name)") }
                let fields = line.dropFirst("// snippet: ".count).components(separatedBy: " | ")
                guard fields.count >= 2 else { throw SnippetFileError(line: number + 1, problem: "a snippet that names no file") }
                open = (fields[0], Array(fields.dropFirst()), [])
            } else if open != nil {
                open!.lines.append(line)
            }
        }
        if let o = open { throw SnippetFileError(line: 0, problem: "\(o.name) is never ended") }
        return blocks
    }

    /// The package root: three levels above this file.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The text of each ```swift block of a markdown text, without its fences.
    static func swiftBlocks(of markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return blocks
    }
}

/// A malformed DocumentationSnippets.swift.
struct SnippetFileError: Error, CustomStringConvertible {
    let line: Int
    let problem: String
    var description: String { "DocumentationSnippets.swift line \(line): \(problem)" }
}

@Suite("Documentation text")
struct DocumentationTextTests {
    @Test("every `// snippet:` block appears verbatim in each markdown file it names")
    func filesHoldTheCompiledSnippets() throws {
        let blocks = try DocumentationSnippet.all()
        #expect(blocks.count == 9)
        #expect(Set(blocks.map(\.name)).count == blocks.count, "two snippets share a name")
        for block in blocks {
            for file in block.files {
                let url = DocumentationSnippet.packageRoot.appendingPathComponent(file)
                let text = try #require(try? String(contentsOf: url, encoding: .utf8), "\(block.name) names \(file), which cannot be read")
                #expect(text.contains("```swift\n" + block.text + "\n```"), "\(file) lacks the \(block.name) snippet as compiled")
            }
        }
    }

    @Test("README.md shows no Swift that DocumentationSnippets.swift does not compile")
    func readmeShowsOnlyCompiledSwift() throws {
        let readme = try String(contentsOf: DocumentationSnippet.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = Set(try DocumentationSnippet.all().filter { $0.files.contains("README.md") }.map(\.text))
        let shown = DocumentationSnippet.swiftBlocks(of: readme)
        #expect(!shown.isEmpty)
        for block in shown {
            #expect(compiled.contains(block), "README.md shows Swift that is not compiled: \(block.prefix(80))…")
        }
    }
}
