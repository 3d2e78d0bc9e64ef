// Real BlueZ: adapters (enumeration, power, several at once) and passive scanning through
// AdvertisementMonitorManager1. The three-controller tests run in test-vm's `vm-adapters` step
// (`--controllers 4 --bluetoothd-args "-d -E"`); the test of the error without --experimental
// runs in the `vm-tests` step (default bluetoothd arguments).

import BlueCapKit
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

extension VM {
    /// The number of btvirt controllers (`run --controllers N`).
    static let controllers = Int(ProcessInfo.processInfo.environment["BLUEZ_VM_CONTROLLERS"] ?? "") ?? 2
    /// Whether bluetoothd runs with `-E` / `--experimental`.
    static let experimental = (ProcessInfo.processInfo.environment["BLUEZ_VM_BLUETOOTHD_ARGS"] ?? "")
        .split(separator: " ").contains { $0 == "-E" || $0 == "--experimental" }

    /// Runs `path arguments` to completion (at most `timeout`) and returns what it printed.
    static func run(_ path: String, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> String {
        let log = logDirectory + "/run-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        let pid = try spawn(path, arguments, log: log)
        let done = Collector<Int32>()
        Thread.detachNewThread {
            var s: Int32 = 0
            while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
            done.append(s)
        }
        do { try await done.wait(for: 1, timeout: timeout) } catch {
            kill(pid, SIGKILL)
            throw VMTestError("\(path) \(arguments) did not finish within \(timeout)")
        }
        defer { unlink(log) }
        return (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }

    /// `Adapter1.RemoveDevice` of `address` on each of `adapters` (errors ignored: not there).
    static func forget(_ connection: Connection, _ address: String, on adapters: [String]) async {
        for a in adapters {
            guard let path = try? ObjectPath("/org/bluez/\(a)"), let device = try? ObjectPath(devicePath(a, address)) else { continue }
            _ = try? await connection.call(destination: "org.bluez", path: path, interface: "org.bluez.Adapter1",
                                           member: "RemoveDevice", arguments: [.objectPath(device)], timeout: answerTimeout)
        }
    }
}

@Suite("Real BlueZ: adapters and passive scanning", .serialized,
       .enabled(if: VM.enabled, "needs the VM: Scripts/bluez-vm/test-vm sets BLUECAP_VM=1"))
struct VMAdapterTests {
    static let company: UInt16 = 0xFFFF
    static let payload: [UInt8] = [0xB1, 0xCA, 0x01]

    @Test("Adapters.list() matches `bluetoothctl list` on three controllers", .enabled(if: VM.controllers >= 3), .timeLimit(.minutes(2)))
    func enumeration() async throws {
        let busSession = BluetoothSession()
        let list = try await Adapters(session: busSession).list().value
        let printed = try await VM.run("/usr/bin/bluetoothctl", ["list"])
        let addresses = printed.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard words.count >= 2, words[0] == "Controller" else { return nil }
            return String(words[1])
        }
        #expect(list.count == VM.controllers, "\(list)")
        #expect(Set(list.map(\.address)) == Set(addresses), "bluetoothctl list printed:\n\(printed)")
        #expect(list.map(\.name) == (0..<VM.controllers).map { "hci\($0)" })
        #expect(list.allSatisfy { $0.powered && !$0.discovering }, "\(list)")
        #expect(list.allSatisfy { $0.supportsMonitoring == VM.experimental }, "\(list)")
    }

    @Test("powering hci2 off and on is seen in the adapters stream and by a manager bound to it",
          .enabled(if: VM.controllers >= 3), .timeLimit(.minutes(2)))
    func powerCycle() async throws {
        let busSession = BluetoothSession()
        let adapters = Adapters(session: busSession)
        _ = try await adapters.list().value
        let manager = CentralManager(adapter: "hci2", session: busSession)
        try await manager.whenPoweredOn(timeout: .seconds(15)).value
        let events = collect(adapters.whenAdaptersChange())
        let states = collect(manager.whenStateChanges())
        try await adapters.setPowered(false, adapter: "hci2").value
        try await waitUntil("hci2 off in the stream", timeout: .seconds(20)) {
            events.items.contains { $0 == .changed($0.adapter) && $0.adapter.name == "hci2" && !$0.adapter.powered }
        }
        try await waitUntil("manager poweredOff", timeout: .seconds(20)) { states.items.last == .poweredOff }
        try await adapters.setPowered(true, adapter: "hci2").value
        try await waitUntil("hci2 on in the stream", timeout: .seconds(20)) { events.items.last?.adapter.powered == true }
        try await manager.whenPoweredOn(timeout: .seconds(20)).value
        let hci2 = events.items.filter { $0.adapter.name == "hci2" }.map(\.adapter.powered)
        #expect(hci2.first == false && hci2.last == true, "\(events.items)")
    }

    @Test("scanning on hci0 and hci2 at once finds the peripheral on hci1 through both, tagged with the adapter",
          .enabled(if: VM.controllers >= 3), .timeLimit(.minutes(3)))
    func multiAdapterScan() async throws {
        let busSession = BluetoothSession()
        let bus = try busSession.testConnection()
        let peripheralBusSession = BluetoothSession()
        let address = try await VM.address(bus, VM.peripheralAdapter)
        await VM.forget(bus, address, on: ["hci0", "hci2"])
        let peripheral = PeripheralManager(adapter: VM.peripheralAdapter, session: peripheralBusSession)
        for try await state in peripheral.whenStateChanges().values where state == .poweredOn { break }
        try await peripheral.startAdvertising("SensorTag", uuids: [Accelerometer.uuid]).value
        let adapters = Adapters(session: busSession)
        _ = try await adapters.list().value
        let seen = Collector<String>()
        adapters.startScanning(on: ["hci0", "hci2"], forServiceUUIDs: [Accelerometer.uuid])
            .onSuccess(context: .immediate) { r in if r.peripheral.address == address { seen.append(r.adapter) } }
        do {
            try await waitUntil("heard through both", timeout: .seconds(60)) { Set(seen.items) == ["hci0", "hci2"] }
        } catch {
            adapters.stopScanning()
            _ = try? await peripheral.stopAdvertising().value
            throw error
        }
        adapters.stopScanning()
        _ = try await peripheral.stopAdvertising().value
        await VM.forget(bus, address, on: ["hci0", "hci2"])
        try await VM.settle(bus)
    }

    @Test("with bluetoothd -E, a monitor on the peripheral's manufacturer data finds it passively and reports it lost when it stops advertising",
          .enabled(if: VM.experimental), .timeLimit(.minutes(3)))
    func passiveMonitoring() async throws {
        let busSession = BluetoothSession()
        let bus = try busSession.testConnection()
        let peripheralBusSession = BluetoothSession()
        let address = try await VM.address(bus, VM.peripheralAdapter)
        await VM.forget(bus, address, on: [VM.centralAdapter])
        let peripheral = PeripheralManager(adapter: VM.peripheralAdapter, session: peripheralBusSession)
        for try await state in peripheral.whenStateChanges().values where state == .poweredOn { break }
        let central = CentralManager(adapter: VM.centralAdapter, session: busSession)
        try await central.whenPoweredOn(timeout: .seconds(15)).value
        let events = Collector<String>()
        let failures = Collector<String>()
        let stream = central.startMonitoring(patterns: [.manufacturerData(companyID: Self.company, prefix: [0xB1, 0xCA])],
                                             rssi: MonitorRSSI(highThreshold: -126, highTimeout: 1, lowThreshold: -127, lowTimeout: 3))
        stream.onSuccess(context: .immediate) { events.append("\($0)") }
        stream.onFailure(context: .immediate) { failures.append("\($0)") }
        try await waitUntil("monitor activated", timeout: .seconds(20)) { central.isMonitoring || !failures.items.isEmpty }
        #expect(failures.items.isEmpty, "\(failures.items)")
        let device = VM.devicePath(VM.centralAdapter, address)
        try await peripheral.startAdvertising(manufacturerData: [Self.company: Data(Self.payload)]).value
        do {
            try await events.wait(for: 1, timeout: .seconds(30))
            #expect(events.items[0] == "found \(device)")
            // Passive: nobody on hci0 discovers.
            #expect(try await VM.snapshot(bus).discovering[VM.centralAdapter] == false)
            _ = try await peripheral.stopAdvertising().value
            try await events.wait(for: 2, timeout: .seconds(30))
            #expect(events.items[1] == "lost \(device)")
        } catch {
            _ = try? await peripheral.stopAdvertising().value
            central.stopMonitoring()
            throw error
        }
        central.stopMonitoring()
        await VM.forget(bus, address, on: [VM.centralAdapter])
        try await VM.settle(bus)
    }

    @Test("without bluetoothd -E, startMonitoring fails at once saying AdvertisementMonitorManager1 is missing and how to enable it",
          .enabled(if: !VM.experimental), .timeLimit(.minutes(1)))
    func monitoringWithoutExperimental() async throws {
        let busSession = BluetoothSession()
        let central = CentralManager(adapter: VM.centralAdapter, session: busSession)
        try await central.whenPoweredOn(timeout: .seconds(15)).value
        let failures = Collector<String>()
        let codes = Collector<BlueCapError.Kind>()
        central.startMonitoring(patterns: [.manufacturerData(companyID: Self.company)]).onFailure(context: .immediate) { e in
            failures.append("\(e)")
            codes.append((e as? BlueCapError)?.kind ?? .other("\(e)"))
        }
        try await failures.wait(for: 1, timeout: .seconds(5))
        #expect(codes.items == [.monitoringUnavailable])
        #expect(failures.items[0].contains("--experimental") && failures.items[0].contains("Experimental = true"), "\(failures.items)")
        // No silent fallback (another suite may be scanning on hci0 meanwhile: only ours is checked).
        #expect(!central.isScanning && !central.isMonitoring)
    }
}
