// Real BlueZ: a PeripheralManager on hci1 and a CentralManager on hci0 in one process, both on the
// VM's system bus, across real bluetoothd + kernel + btvirt. Skipped unless BLUECAP_VM=1
// (Scripts/bluez-vm/test-vm runs the test bundle inside the VM).

import BlueCapKit
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

typealias Accelerometer = TISensorTag.AccelerometerService

/// One peripheral serving the accelerometer service on hci1 and one central on hci0.
final class Pair: Sendable {
    let peripheralBus: Connection
    let centralBus: Connection
    let peripheral: PeripheralManager
    let central: CentralManager
    let service = MutableService(profile: Accelerometer.profile)
    let peripheralAddress: String
    let centralAddress: String

    /// Checks that the adapters are as every test must leave them (``VM/settle(_:timeout:)``),
    /// connects both managers, waits for `.poweredOn`, adds the service and advertises it.
    static func start(serve: Bool = true) async throws -> Pair {
        let p = try await Pair()
        try await VM.settle(p.centralBus)
        try await p.central.whenPoweredOn(timeout: .seconds(15)).value
        if serve {
            try await withDeadline(.seconds(20), "add + advertise") {
                try await p.peripheral.add(p.service).value
                try await p.peripheral.startAdvertising("SensorTag", uuids: [Accelerometer.uuid]).value
            }
        }
        return p
    }

    private init() async throws {
        // Two sessions, as the two roles are two programs on a real system.
        let peripheralSession = BluetoothSession(), centralSession = BluetoothSession()
        peripheralBus = try peripheralSession.testConnection()
        centralBus = try centralSession.testConnection()
        peripheral = PeripheralManager(adapter: VM.peripheralAdapter, session: peripheralSession)
        central = CentralManager(adapter: VM.centralAdapter, session: centralSession)
        peripheralAddress = try await VM.address(centralBus, VM.peripheralAdapter)
        centralAddress = try await VM.address(centralBus, VM.centralAdapter)
    }

    /// Terminates every peripheral the central knows, unregisters the peripheral's application and
    /// advertisement, disconnects every device bluetoothd still reports connected (on either
    /// adapter: what the library believes does not count), then waits until the adapters are
    /// back to their initial state; a test that leaves them otherwise fails here, not the next one.
    func stop() async {
        for p in central.peripherals { p.terminate() }
        central.reset()
        await withDeadlineOrNil { _ = try? await self.peripheral.shutdown().value }
        do {
            for path in try await VM.snapshot(centralBus).connected {
                _ = try? await centralBus.call(destination: "org.bluez", path: try ObjectPath(path), interface: "org.bluez.Device1",
                                               member: "Disconnect", timeout: VM.answerTimeout)
            }
            try await VM.settle(centralBus)
        } catch {
            Issue.record("clean-up: \(error)")
        }
    }

    /// Runs `body` with a started pair and always awaits ``stop()``.
    static func with(serve: Bool = true, _ body: (Pair) async throws -> Void) async throws {
        let pair = try await Pair.start(serve: serve)
        do { try await body(pair) } catch {
            await pair.stop()
            throw error
        }
        await pair.stop()
    }

    /// The peripheral at `address`: the device bluetoothd already knows (a scan does not report it
    /// again: btvirt's RSSI is always 127 and nothing else changes, so bluetoothd emits no signal —
    /// see the report), else the first one a scan for the accelerometer service finds.
    func discover(_ address: String? = nil, timeout: Duration = .seconds(30)) async throws -> Peripheral {
        let wanted = address ?? peripheralAddress
        if let p = central.retrievePeripherals(withAddresses: [wanted]).first { return p }
        let found = Collector<Peripheral>()
        central.startScanning(forServiceUUIDs: [Accelerometer.uuid]).onSuccess(context: .immediate) { p in
            if p.address == wanted { found.append(p) }
        }
        defer { central.stopScanning() }
        return try await found.wait(for: 1, timeout: timeout)[0]
    }

    /// Connects; the events and failures arrive in the returned collectors. A connection attempt
    /// that times out is retried (up to 2 times; each `.timeout` goes to `failures`, not
    /// `events`) after a power cycle of the central's adapter: with btvirt, bluetoothd 5.66
    /// sometimes keeps a device "connected" after its link went down (no Connected=false; README
    /// lesson 14) and the next `Connect` gets no reply; once, cancelling that attempt left hci0's
    /// kernel side unable to create any LE connection for the rest of the run. Powering the
    /// adapter off drops bluetoothd's and the kernel's connection state; the device object stays.
    func connect(_ p: Peripheral, disconnectRetries: Int = 0)
        -> (events: Collector<ConnectionEvent>, failures: Collector<String>) {
        let events = Collector<ConnectionEvent>()
        let failures = Collector<String>()
        let bus = centralBus
        p.connect(timeoutRetries: 2, disconnectRetries: disconnectRetries, connectionTimeout: .seconds(15))
            .onComplete(context: .immediate) { r in
                switch r {
                case .success(let e) where e.connectionEvent == .timeout:
                    failures.append("connection attempt timed out; power-cycling \(VM.centralAdapter), retrying")
                    Task {
                        do {
                            try await VM.setPowered(bus, VM.centralAdapter, false)
                            try await VM.setPowered(bus, VM.centralAdapter, true)
                        } catch {
                            failures.append("power cycle: \(error)")
                        }
                        p.reconnect()
                    }
                case .success(let e): events.append(e.connectionEvent)
                case .failure(let error):
                    // btvirt: a retried LE connection sometimes fails at once with
                    // org.bluez.Error.Failed "Input/output error"; try twice more.
                    failures.append("\(error)")
                    if failures.items.count <= 3 { p.reconnect(withDelay: .milliseconds(500)) }
                }
            }
        return (events, failures)
    }

    /// Discovers the accelerometer service and its characteristics.
    func gatt(_ p: Peripheral) async throws -> Service {
        _ = try await p.discoverServices([Accelerometer.uuid], timeout: .seconds(30)).value
        let service = try #require(p.service(Accelerometer.uuid))
        _ = try await service.discoverCharacteristics(timeout: .seconds(10)).value
        return service
    }
}

// Time limits (per test: the shortest of a suite's and a test's limit applies) are sized for TCG on
// a shared 2-core host: a connect/disconnect round takes 3-6 s, a round whose Connect bluetoothd
// never answers costs 25-40 s (timeout, cancel, retry), seen in up to 3 of 20 rounds.
@Suite("Real BlueZ in the VM", .serialized, .enabled(if: VM.enabled, "needs the VM: Scripts/bluez-vm/test-vm sets BLUECAP_VM=1"))
struct RealBlueZTests {
    @Test("a central connects to and disconnects from the peripheral 20 times in a row", .timeLimit(.minutes(8)))
    func connectDisconnectLoop() async throws {
        try await Pair.with { pair in
            let p = try await pair.discover()
            let clock = ContinuousClock()
            for i in 1...20 {
                let start = clock.now
                let (events, failures) = pair.connect(p)
                do {
                    try await events.wait(for: 1, timeout: .seconds(50))
                } catch {
                    Issue.record("round \(i): no .connect (\(error)); failures: \(failures.items)")
                    return
                }
                #expect(events.items == [.connect], "round \(i)")
                #expect(p.isConnected, "round \(i): events \(events.items), Device1 Connected \(String(describing: p.deviceProperties.connected))")
                // The peripheral's bluetoothd discovers the central too; disconnecting in the
                // middle of that is what can stall bluetoothd 5.66 for 30 s (README lesson 17).
                let resolved = await VM.servicesResolved(pair.peripheralBus, adapter: VM.peripheralAdapter,
                                                         address: pair.centralAddress, timeout: .seconds(10))
                p.disconnect()
                do { try await events.wait(for: 2, timeout: .seconds(45)) } catch {
                    Issue.record("round \(i): no second event: \(events.items), failures \(failures.items), Device1 Connected \(String(describing: p.deviceProperties.connected))")
                    throw error
                }
                #expect(events.items == [.connect, .forceDisconnect], "round \(i)")
                print("vm: connect/disconnect round \(i) in \(clock.now - start); peripheral side resolved first: \(resolved); retried: \(failures.items)")
            }
            #expect(!p.isConnected)
        }
    }

    @Test("reads, writes answered by the peripheral's app, a rejected write as BlueZ reports it, and notifications", .timeLimit(.minutes(3)))
    func readWriteNotify() async throws {
        try await Pair.with { pair in
            let enabled = try #require(pair.service.characteristic(Accelerometer.Enabled.uuid))
            let dataOut = try #require(pair.service.characteristic(Accelerometer.Data.uuid))
            let writes = collect(enabled.startRespondingToWriteRequests())
            let subscriptions = collect(dataOut.whenSubscriptionChanges())

            let p = try await pair.discover()
            let (events, failures) = pair.connect(p)
            try await events.wait(for: 1, timeout: .seconds(50))
            #expect(failures.items.isEmpty || events.items == [.connect])
            let service = try await pair.gatt(p)
            let data = try #require(service.characteristic(Accelerometer.Data.uuid))
            let enabledIn = try #require(service.characteristic(Accelerometer.Enabled.uuid))

            // Read.
            _ = try await data.read().value
            #expect(data.value == Data([0, 0, 64]))

            // A write the app accepts.
            let write = Task { try await enabledIn.write(data: Data([1])).value }
            let request = try await writes.wait(for: 1, timeout: .seconds(10))[0]
            #expect(request.request.value == Data([1]))
            #expect(request.central.address == (try await VM.address(pair.centralBus, VM.centralAdapter)))
            #expect(enabled.respondToRequest(request.request, withResult: .success))
            _ = try await write.value
            _ = try await enabledIn.read().value
            #expect(enabledIn.value == Data([1]))

            // Writes the app rejects: what the central gets from real bluetoothd.
            // The Unlikely Error is what an unanswered request gets: bluetoothd must carry 0x0E, not 0x80.
            let answers: [(ATTError, BlueCapError.Kind, ATTError?)] = [
                (.application(0x80), .failed, .application(0x80)), (.writeNotPermitted, .notPermitted, nil),
                (.unlikelyError, .failed, .unlikelyError)]
            for (i, (answer, kind, att)) in answers.enumerated() {
                let rejected = Task { try await enabledIn.write(data: Data([5])).value }
                let r = try await writes.wait(for: 2 + i, timeout: .seconds(10))[1 + i]
                enabled.respondToRequest(r.request, withResult: .failure(answer))
                do {
                    _ = try await rejected.value
                    Issue.record("the write rejected with \(answer) succeeded")
                } catch let e as PeripheralError {
                    print("vm: write rejected with \(answer) -> \(e.bluez?.errorName ?? "-"): \"\(e.bluez?.message ?? "")\"")
                    #expect(e.kind == kind, "\(e)")
                    #expect(e.attError == att, "\(e)")
                }
            }
            _ = try await enabledIn.read().value
            #expect(enabledIn.value == Data([1]), "rejected writes change nothing")

            // Notifications, in order.
            let updates = Collector<Data>()
            data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let d = $0.data { updates.append(d) } }
            _ = try await data.startNotifying().value
            try await subscriptions.wait(for: 1, timeout: .seconds(10))
            // bluetoothd asked our characteristic for a socket (NotifyAcquired exported): the
            // notifications below leave through it, not as PropertiesChanged.
            #expect(dataOut.isNotifyAcquired, "bluetoothd called AcquireNotify on the peripheral's characteristic")
            let sent = (1...5).map { Data([UInt8($0), 0, 64]) }
            for d in sent { #expect(dataOut.updateValue(withData: d)) }
            #expect(try await updates.wait(for: 5, timeout: .seconds(10)) == sent)
            _ = try await data.stopNotifying().value
            #expect(try await subscriptions.wait(for: 2, timeout: .seconds(20)) == [.subscribed, .unsubscribed])
            #expect(!dataOut.isNotifyAcquired, "bluetoothd closed the socket with the last subscription")
            p.disconnect()
            try await events.wait(for: 2, timeout: .seconds(15))
        }
    }

    @Test("a peripheral process killed with SIGKILL, then its adapter gone: the central sees .disconnect", .timeLimit(.minutes(3)))
    func peripheralProcessKilled() async throws {
        try await Pair.with(serve: false) { pair in
            let pid = try VM.spawn(VM.binDirectory + "/accelerometer-peripheral", ["--adapter", VM.peripheralAdapter, "--json"],
                                   log: VM.logDirectory + "/vm-peripheral.log")
            var reaped = false
            defer { if !reaped { kill(pid, SIGKILL); var s: Int32 = 0; waitpid(pid, &s, 0) } }
            let p = try await pair.discover()
            let (events, _) = pair.connect(p, disconnectRetries: 1)
            try await events.wait(for: 1, timeout: .seconds(50))
            let service = try await pair.gatt(p)
            let data = try #require(service.characteristic(Accelerometer.Data.uuid))
            let samples = Collector<Data>()
            data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let d = $0.data { samples.append(d) } }
            _ = try await data.startNotifying().value
            // The example notifies only while enabled.
            _ = try await #require(service.characteristic(Accelerometer.Enabled.uuid)).write(data: Data([1])).value
            try await samples.wait(for: 3, timeout: .seconds(15))

            let status = try await VM.killAndReap(pid, SIGKILL)
            reaped = true
            #expect(status & 0x7f == SIGKILL)
            // bluetoothd drops the dead client's application and advertisement; the link stays up
            // (BlueZ does not disconnect when a GATT application leaves). A peripheral that goes away
            // for good also drops the link: power its adapter off.
            let early = (try? await events.wait(for: 2, timeout: .seconds(3))) != nil
            print("vm: after SIGKILL of the peripheral process: events \(events.items), connected \(p.isConnected), link dropped at once: \(early)")
            try await VM.setPowered(pair.centralBus, VM.peripheralAdapter, false)
            do {
                try await events.wait(for: 2, timeout: .seconds(20))
            } catch {
                // Power comes back before the clean-up's check, on every path.
                try? await VM.setPowered(pair.centralBus, VM.peripheralAdapter, true)
                throw error
            }
            #expect(events.items == [.connect, .disconnect])
            #expect(!p.isConnected)
            try await VM.setPowered(pair.centralBus, VM.peripheralAdapter, true)
        }
    }

    @Test("bluetoothd killed mid-stream and restarted: the states go through resetting, the central scans and reconnects",
          .timeLimit(.minutes(4)))
    func bluetoothdRestart() async throws {
        try await Pair.with { pair in
            let dataOut = try #require(pair.service.characteristic(Accelerometer.Data.uuid))
            let centralStates = collect(pair.central.whenStateChanges())
            let peripheralStates = collect(pair.peripheral.whenStateChanges())
            let p = try await pair.discover()
            let (events, failures) = pair.connect(p, disconnectRetries: 5)
            try await events.wait(for: 1, timeout: .seconds(50))
            let data = try #require(try await pair.gatt(p).characteristic(Accelerometer.Data.uuid))
            let updates = Collector<Data>()
            data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let d = $0.data { updates.append(d) } }
            _ = try await data.startNotifying().value
            #expect(dataOut.updateValue(withData: Data([1, 1, 1])))
            try await updates.wait(for: 1, timeout: .seconds(10))

            // Kill it the hard way: no clean-up, the kernel keeps the adapters and the link.
            let old = try #require(VM.bluetoothdPID())
            kill(old, SIGKILL)
            let clock = ContinuousClock()
            let killed = clock.now
            try await waitFor("central leaves .poweredOn", centralStates) { $0.contains { $0 == .resetting || $0 == .unsupported } }
            #expect(pair.central.state != .poweredOn)
            print("vm: bluetoothd killed: central states \(centralStates.items), peripheral states \(peripheralStates.items), events \(events.items) after \(clock.now - killed)")

            let new = try VM.startBluetoothd()
            #expect(new != old)
            try await waitFor("central back to .poweredOn", centralStates, timeout: .seconds(60)) { Array($0.drop { $0 == .poweredOn }).last == .poweredOn }
            try await waitFor("peripheral back to .poweredOn", peripheralStates, timeout: .seconds(30)) { Array($0.drop { $0 == .poweredOn }).last == .poweredOn }
            print("vm: bluetoothd restarted: central states \(centralStates.items), peripheral states \(peripheralStates.items), events \(events.items), failures \(failures.items) after \(clock.now - killed)")
            // The link from before the kill survives in the kernel: the restarted bluetoothd lists
            // the device as connected until that link ends (its log: "disconnected, reason 3", a
            // few seconds later). A reconnection before then finds the old link and loses it in
            // the middle of service discovery: wait for it to go (at most 30 s).
            let oldLinkGone = try await VM.recheck(pair.centralBus, timeout: .seconds(30)) { () async throws -> Bool? in
                try await VM.snapshot(pair.centralBus).connected.isEmpty ? true : nil
            }
            print("vm: link from before the kill gone after the restart: \(oldLinkGone == true), \(clock.now - killed) after the kill")

            // The peripheral manager registered its application and advertisement again; the central
            // finds the device again and reconnects.
            let again = try await pair.discover(timeout: .seconds(40))
            let (events2, failures2) = pair.connect(again)
            do { try await events2.wait(for: 1, timeout: .seconds(50)) } catch {
                Issue.record("no .connect after the restart: \(failures2.items); bluetoothd:\n\(VM.tail("bluetoothd-restarted.log"))")
                throw error
            }
            let data2 = try #require(try await pair.gatt(again).characteristic(Accelerometer.Data.uuid))
            _ = try await data2.read().value
            #expect(data2.value == Data([1, 1, 1]))
            again.disconnect()
            try await events2.wait(for: 2, timeout: .seconds(15))
            print("vm: reconnected and read after the restart, \(clock.now - killed) after the kill")
        }
    }

    /// Waits until `condition` holds for the states collected so far (each new state re-checks).
    private func waitFor(_ what: String, _ states: Collector<ManagerState>, timeout: Duration = .seconds(20),
                         _ condition: ([ManagerState]) -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !condition(states.items) {
            guard clock.now < deadline else { throw VMTestError("\(what): states \(states.items) after \(timeout)") }
            _ = try? await states.wait(for: states.items.count + 1, timeout: deadline - clock.now)
        }
    }
}

/// Runs `body` with a deadline, ignoring the outcome (clean-up).
func withDeadlineOrNil(_ timeout: Duration = .seconds(10), _ body: @escaping @Sendable () async -> Void) async {
    _ = try? await withDeadline(timeout, "cleanup") { await body(); return true }
}
