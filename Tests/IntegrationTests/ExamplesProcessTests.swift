// The example executables run as processes against ONE BlueZSimulator on a private bus
// (DBUS_SYSTEM_BUS_ADDRESS points them at it): the peripheral on hci1, the central on hci0.

import BlueZSimulator
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Examples as processes against the simulator", .serialized)
struct ExamplesProcessTests {
    static let serviceUUID = "f000aa10-0451-4000-b000-000000000000"

    /// A private bus with a simulator (two linked adapters) and a raw connection for checks.
    final class World: Sendable {
        let bus: TestBus
        let simulator: BlueZSimulator
        let observer: Connection

        init() async throws {
            bus = try TestBus()
            simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 2)
            observer = try bus.connect()
        }

        func stop() {
            simulator.stop()
            bus.stop()
        }

        /// Starts accelerometer-peripheral on hci1 and waits until it advertises.
        func startPeripheral() async throws -> ExampleProcess {
            let p = try ExampleProcess("accelerometer-peripheral", ["--adapter", "hci1", "--json"], bus: bus.address)
            try await p.waitLine("advertising") { ExampleProcess.parse($0)?["advertising"] as? Bool == true }
            return p
        }

        func call(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = [],
                  destination: String = "org.bluez") async throws -> Message {
            try await observer.call(destination: destination, path: try ObjectPath(path), interface: interface, member: member,
                                    arguments: args, timeout: .seconds(5))
        }

        /// hci1's `LEAdvertisingManager1.ActiveInstances` and whether `Adapter1.UUIDs` lists the service.
        func hci1Registrations() async throws -> (advertisements: UInt8, serviceRegistered: Bool) {
            let ads = try await call("/org/bluez/hci1", "org.freedesktop.DBus.Properties", "Get",
                                     [.string("org.bluez.LEAdvertisingManager1"), .string("ActiveInstances")])
            let uuids = try await call("/org/bluez/hci1", "org.freedesktop.DBus.Properties", "Get",
                                       [.string("org.bluez.Adapter1"), .string("UUIDs")])
            guard case .byte(let n)? = ads.body.first?.unwrapped, case .array(_, let list)? = uuids.body.first?.unwrapped else {
                throw ProcessTestError("unexpected property replies \(ads.body) \(uuids.body)")
            }
            let registered = list.contains { if case .string(let s) = $0 { s.lowercased() == ExamplesProcessTests.serviceUUID } else { false } }
            return (n, registered)
        }

        /// The unique bus name of the process `pid` (`GetConnectionUnixProcessID` over `ListNames`).
        func uniqueName(of pid: pid_t) async throws -> String {
            let names = try await call("/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames", destination: "org.freedesktop.DBus")
            guard case .array(_, let items)? = names.body.first else { throw ProcessTestError("ListNames: \(names.body)") }
            for case .string(let name) in items where name.hasPrefix(":") {
                guard let r = try? await call("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                              [.string(name)], destination: "org.freedesktop.DBus") else { continue }
                if r.body.first == .uint32(UInt32(pid)) { return name }
            }
            throw ProcessTestError("no connection of pid \(pid) on the bus")
        }
    }

    @Test("central-scanner --json --duration 3 lists the accelerometer-peripheral process by name and service UUID")
    func scannerFindsPeripheral() async throws {
        let world = try await World()
        defer { world.stop() }
        let peripheral = try await world.startPeripheral()
        let scanner = try ExampleProcess("central-scanner", ["--adapter", "hci0", "--json", "--duration", "3"], bus: world.bus.address)
        let code = try await scanner.exitCode(within: .seconds(20))
        #expect(code == 0, "stderr: \(scanner.stderr)")
        let found = scanner.events.filter { $0["event"] as? String == "discovered" }
        let tag = found.first { $0["name"] as? String == "SensorTag" }
        #expect(tag != nil, "discovered: \(found)")
        let uuids = (tag?["uuids"] as? [String] ?? []).map { $0.lowercased() }
        #expect(uuids.contains(Self.serviceUUID))
        #expect(tag?["rssi"] is Int)
        #expect((tag?["address"] as? String)?.uppercased() == world.simulator.adapterAddress(1)?.uppercased())
        #expect(scanner.events.last?["event"] as? String == "done")
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(10)) == 0)
    }

    @Test("central-scanner --json --duration: bluetoothd restarting interrupts the scan, which resumes and finds the peripheral again")
    func scannerResumesAfterRestart() async throws {
        let world = try await World()
        defer { world.stop() }
        let peripheral = try await world.startPeripheral()
        let scanner = try ExampleProcess("central-scanner", ["--adapter", "hci0", "--json", "--duration", "8", "--service", Self.serviceUUID],
                                         bus: world.bus.address)
        func event(_ line: String) -> String? { ExampleProcess.parse(line)?["event"] as? String }
        _ = try await scanner.waitLine("discovered") { event($0) == "discovered" }
        try await world.simulator.restart()
        _ = try await scanner.waitLine("interrupted") { event($0) == "interrupted" }
        let code = try await scanner.exitCode(within: .seconds(20))
        #expect(code == 0, "stderr: \(scanner.stderr)")
        let names = scanner.events.compactMap { $0["event"] as? String }
        let interrupted = try #require(names.firstIndex(of: "interrupted"))
        let resumed = names[interrupted...].firstIndex(of: "scanning")
        #expect(resumed != nil, "\(names)")
        #expect(names[(resumed ?? names.endIndex)...].contains("discovered"), "found again after the restart: \(names)")
        #expect(names.last == "done")
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(10)) == 0)
    }

    @Test("central-scanner --accelerometer --samples 5 exits 0 with 5 samples that are the ones the peripheral sent")
    func accelerometerSamplesFollowPeripheralMotion() async throws {
        let world = try await World()
        defer { world.stop() }
        let peripheral = try await world.startPeripheral()
        let central = try ExampleProcess("central-scanner", ["--accelerometer", "--adapter", "hci0", "--samples", "5",
                                                             "--period-ms", "50", "--json"], bus: world.bus.address)
        let code = try await central.exitCode(within: .seconds(30))
        #expect(code == 0, "stderr: \(central.stderr)")
        let samples = central.events.filter { $0["event"] as? String == "sample" }.map { e in
            [e["x"] as? Double ?? .nan, e["y"] as? Double ?? .nan, e["z"] as? Double ?? .nan]
        }
        #expect(samples.count == 5, "stdout: \(central.lines.items)")
        let steps = central.events.compactMap { $0["event"] as? String }
        for step in ["waiting-for-adapter", "scanning", "found", "connecting", "connected", "discovering", "configuring", "streaming"] {
            #expect(steps.contains(step), "no \(step) event in \(steps)")
        }

        // The peripheral saw the writes and prints every sample it sends.
        let writes = peripheral.events.filter { $0["event"] as? String == "write" }
        #expect(writes.contains { $0["characteristic"] as? String == "Enabled" && $0["value"] as? Int == 1 })
        #expect(writes.contains { $0["characteristic"] as? String == "UpdatePeriod" && $0["value"] as? Int == 5 })
        let sent = peripheral.events.filter { $0["event"] as? String == "sent" && $0["delivered"] as? Bool == true }.map { e in
            [e["x"] as? Double ?? .nan, e["y"] as? Double ?? .nan, e["z"] as? Double ?? .nan]
        }
        // The central's samples are consecutive samples the peripheral delivered, in order.
        let start = sent.firstIndex { $0 == samples.first }
        #expect(start != nil, "first sample \(samples.first ?? []) not among the sent ones \(sent.prefix(10))")
        if let start, sent.count >= start + samples.count {
            #expect(Array(sent[start..<(start + samples.count)]) == samples)
        }
        // Smooth, bounded, always moving.
        for s in samples { #expect(s.allSatisfy { abs($0) <= 2 }) }
        for (a, b) in zip(samples, samples.dropFirst()) {
            #expect(a != b, "consecutive samples \(a) and \(b) are equal")
            #expect(zip(a, b).allSatisfy { abs($0 - $1) < 0.25 }, "a jump from \(a) to \(b)")
        }
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(10)) == 0, "stderr: \(peripheral.stderr)")
    }

    @Test("without bluetoothd on the bus both examples exit 2 with one line saying what to do")
    func noBluetoothd() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        for (name, args) in [("central-scanner", ["--duration", "1"]), ("central-scanner", ["--accelerometer"]),
                             ("accelerometer-peripheral", [])] {
            let p = try ExampleProcess(name, args, bus: bus.address)
            #expect(try await p.exitCode(within: .seconds(15)) == 2)
            let lines = p.stderr.split(separator: "\n")
            #expect(lines.count == 1, "stderr: \(p.stderr)")
            #expect(lines.first?.hasPrefix("\(name): no org.bluez on the system bus") == true)
            #expect(p.stderr.contains("bluetoothd") && p.stderr.contains("--simulate"))
        }
    }

    @Test("bad arguments print the usage and exit 64")
    func badArguments() async throws {
        for (name, args) in [("central-scanner", ["--frobnicate"]), ("central-scanner", ["--samples", "5"]),
                             ("accelerometer-peripheral", ["--adapter"])] {
            let p = try ExampleProcess(name, args, bus: "unix:path=/nonexistent")
            #expect(try await p.exitCode(within: .seconds(10)) == 64)
            #expect(p.stderr.contains("usage: \(name)"))
        }
    }

    @Test("SIGTERM stops accelerometer-peripheral promptly with exit 0 after it unregistered its advertisement and application")
    func peripheralStopsCleanly() async throws {
        let world = try await World()
        defer { world.stop() }
        let peripheral = try await world.startPeripheral()
        let registered = try await world.hci1Registrations()
        #expect(registered.advertisements == 1)
        #expect(registered.serviceRegistered)

        // Watch the adapter's properties and the process's bus connection, in bus order.
        let name = try await world.uniqueName(of: peripheral.pid)
        let signals = Collector<Message>()
        let adapterSignals = world.observer.subscribe(rule: MatchRule(sender: "org.bluez", path: "/org/bluez/hci1")) { signals.append($0) }
        let gone = world.observer.subscribe(rule: MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                            member: "NameOwnerChanged", arg0: name)) { signals.append($0) }
        try await adapterSignals.established()
        try await gone.established()
        defer {
            adapterSignals.cancel()
            gone.cancel()
        }

        let clock = ContinuousClock()
        let start = clock.now
        peripheral.send(SIGTERM)
        #expect(try await peripheral.exitCode(within: .seconds(5)) == 0)
        #expect(clock.now - start < .seconds(4), "exit took \(clock.now - start)")
        // NameOwnerChanged for the process's connection arrives last.
        while !signals.items.contains(where: { $0.member == "NameOwnerChanged" }) {
            try await signals.wait(for: signals.items.count + 1, timeout: .seconds(5))
        }
        let after = try await world.hci1Registrations()
        #expect(after.advertisements == 0)
        #expect(!after.serviceRegistered)
        // Unregistered by the program itself: the adapter changed BEFORE its connection closed
        // (the simulator would also drop them when the client vanishes).
        let items = signals.items
        let nameGone = items.firstIndex { $0.member == "NameOwnerChanged" }
        let adChange = items.firstIndex { $0.member == "PropertiesChanged" && $0.path?.rawValue == "/org/bluez/hci1" }
        #expect(nameGone != nil && adChange != nil, "signals: \(items.map { "\($0.member ?? "") \($0.body)" })")
        if let nameGone, let adChange { #expect(adChange < nameGone) }
        #expect(peripheral.events.contains { $0["event"] as? String == "stopping" })
    }
}
