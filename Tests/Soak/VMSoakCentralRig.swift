// VMSoakCentralRig: one soak cycle on real bluetoothd, and the clean-up after a failed one.
@_spi(Testing) import BlueCapKit
import DBus
import Foundation
import Glibc
import Locking
import TestSupport

final class VMSoakCentralRig: Sendable {
    let bus: Connection
    let central: CentralManager
    let watch: RestartWatch
    let adapter: String
    let peripheralAdapter: String
    let peripheralAddress: String
    let centralAddress: String

    init(adapter: String, peripheralAdapter: String) async throws {
        let session = BluetoothSession()
        bus = try need(session.busConnection, "the system bus: \(session.unavailableReason ?? "")")
        central = CentralManager(adapter: adapter, session: session)
        watch = RestartWatch(central)
        self.adapter = adapter
        self.peripheralAdapter = peripheralAdapter
        try await central.whenPoweredOn(timeout: .seconds(60)).value
        peripheralAddress = try await Self.address(bus, peripheralAdapter)
        centralAddress = try await Self.address(bus, adapter)
    }

    // MARK: - One cycle

    /// connect → discover → write `n` to control → subscribe → 100 notifications → disconnect.
    /// Returns the number of notifications (100); throws ``CycleFailure`` or the library's error.
    func cycle(_ n: UInt32) async throws -> Int {
        try await central.whenPoweredOn(timeout: .seconds(90)).value
        let p = try await find()
        let events = connect(p)
        let first = try await events.wait(for: 1, timeout: .seconds(60))[0]
        guard first == .connect else { throw CycleFailure(message: "connection event \(first)") }
        _ = try await p.discoverServices([VMSoakProfile.service], timeout: .seconds(30)).value
        guard let service = p.service(VMSoakProfile.service) else { throw CycleFailure(message: "no soak service") }
        _ = try await service.discoverCharacteristics([VMSoakProfile.control, VMSoakProfile.data]).value
        guard let control = service.characteristic(VMSoakProfile.control),
              let data = service.characteristic(VMSoakProfile.data) else { throw CycleFailure(message: "no soak characteristics") }
        _ = try await control.write(data: VMSoakProfile.notification(cycle: n, sequence: 0).prefix(4)).value
        let notes = Collector<Data>(), ended = Collector<String>()
        data.receiveNotificationUpdates(capacity: 128).onComplete(context: .immediate) { r in
            switch r {
            case .success(let u): if let d = u.data { notes.append(d) }
            case .failure(let e): ended.append("\(e)")
            }
        }
        _ = try await data.startNotifying(resubscribeOnReconnect: false).value
        let expected = (0..<VMSoakProfile.count).map { VMSoakProfile.notification(cycle: n, sequence: UInt16($0)) }
        // Until all arrived, the stream ended (the link dropped) or 60 s passed: a bounded poll.
        let deadline = ContinuousClock.now + .seconds(60)
        while notes.items.count < expected.count && ended.items.isEmpty && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
        }
        if notes.items.count < expected.count {
            try check(notes.items, expected)
            let why = ended.items.first.map { "the stream ended: \($0)" } ?? "60 s passed"
            throw CycleFailure(message: "\(notes.items.count) of \(expected.count) notifications, then \(why)", missing: true)
        }
        // bluetoothd 5.66 can stall 30 s when a link drops while its own discovery of the
        // central is still running (Scripts/bluez-vm/README.md lesson 17): let it finish first.
        _ = await servicesResolvedOnPeripheralSide(timeout: .seconds(10))
        p.disconnect()
        let second = try await events.wait(for: 2, timeout: .seconds(45))[1]
        guard second == .forceDisconnect else { throw CycleFailure(message: "disconnection event \(second)") }
        // Everything that could still arrive has arrived with the link gone: exactly 100, in order.
        try check(notes.items, expected)
        guard notes.items.count == expected.count else {
            throw CycleFailure(message: "\(notes.items.count) notifications, want \(expected.count)", inexact: true)
        }
        return notes.items.count
    }

    /// Throws an `inexact` failure unless `got` is a prefix of `expected`, naming the first difference.
    private func check(_ got: [Data], _ expected: [Data]) throws {
        for (i, d) in got.enumerated() where i >= expected.count || d != expected[i] {
            let want = i < expected.count ? [UInt8](expected[i]).description : "nothing more"
            throw CycleFailure(message: "notification \(i) was \([UInt8](d)), want \(want) (\(got.count) received)", inexact: true)
        }
    }

    /// The peripheral: the device bluetoothd has (a scan does not report a known btvirt device
    /// again, README lesson 12), else the first one a scan for the soak service finds.
    private func find() async throws -> Peripheral {
        if let p = central.retrievePeripherals(withAddresses: [peripheralAddress]).first { return p }
        let found = Collector<Peripheral>()
        let wanted = peripheralAddress
        central.startScanning(forServiceUUIDs: [VMSoakProfile.service]).onSuccess(context: .immediate) { p in
            if p.address == wanted { found.append(p) }
        }
        defer { central.stopScanning() }
        return try await found.wait(for: 1, timeout: .seconds(40))[0]
    }

    /// Connects as the VM tests do (VMTests `Pair.connect`): a timed-out attempt is retried after a
    /// power cycle of the central's adapter (README lesson 14), an immediate failure up to 3 times.
    private func connect(_ p: Peripheral) -> Collector<ConnectionEvent> {
        let events = Collector<ConnectionEvent>()
        let failures = Collector<String>()
        let (bus, adapter) = (bus, adapter)
        p.connect(timeoutRetries: 2, connectionTimeout: .seconds(15)).onComplete(context: .immediate) { r in
            switch r {
            case .success(let e) where e.connectionEvent == .timeout:
                say("connection attempt timed out: power-cycling \(adapter), retrying")
                Task {
                    try? await Self.setPowered(bus, adapter, false)
                    try? await Self.setPowered(bus, adapter, true)
                    p.reconnect()
                }
            case .success(let e): events.append(e.connectionEvent)
            case .failure(let error):
                failures.append("\(error)")
                say("connection failed (\(error))\(failures.items.count <= 3 ? ", retrying" : "")")
                if failures.items.count <= 3 { p.reconnect(withDelay: .milliseconds(500)) }
            }
        }
        return events
    }

    // MARK: - After a failure

    /// Forgets the device (`Adapter1.RemoveDevice`: drops the link and bluetoothd's object, so the
    /// next cycle starts from a scan), else terminates it; then waits (at most 30 s) until
    /// bluetoothd reports nothing connected on our adapter.
    func cleanUp() async {
        for p in central.peripherals {
            do { try await p.forget().value } catch { p.terminate() }
        }
        let path = devicePath(adapter, peripheralAddress)
        for _ in 0..<60 {
            guard case .bool(true)? = try? await property(path, "org.bluez.Device1", "Connected") else { return }
            try? await Task.sleep(for: .milliseconds(500))
        }
        say("clean-up: \(path) still connected after 30 s")
    }

    // MARK: - org.bluez helpers (harness side: bounded polls are fine here)

    /// Waits (polling every 0.5 s, at most `timeout`) for the peripheral side's device of the
    /// central to report `ServicesResolved`.
    private func servicesResolvedOnPeripheralSide(timeout: Duration) async -> Bool {
        let path = devicePath(peripheralAdapter, centralAddress)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if case .bool(true)? = try? await property(path, "org.bluez.Device1", "ServicesResolved") { return true }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return false
    }

    private func devicePath(_ adapter: String, _ address: String) -> String {
        "/org/bluez/\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }

    private func property(_ path: String, _ interface: String, _ name: String) async throws -> DBusValue? {
        try await Self.property(bus, path, interface, name)
    }

    static func property(_ bus: Connection, _ path: String, _ interface: String, _ name: String) async throws -> DBusValue? {
        let reply = try await bus.call(destination: "org.bluez", path: try ObjectPath(path), interface: "org.freedesktop.DBus.Properties",
                                       member: "Get", arguments: [.string(interface), .string(name)], timeout: .seconds(40))
        return reply.body.first?.unwrapped
    }

    static func address(_ bus: Connection, _ adapter: String) async throws -> String {
        guard case .string(let a)? = try await property(bus, "/org/bluez/\(adapter)", "org.bluez.Adapter1", "Address") else {
            throw CycleFailure(message: "no Address on \(adapter)")
        }
        return a
    }

    static func setPowered(_ bus: Connection, _ adapter: String, _ on: Bool) async throws {
        _ = try await bus.call(destination: "org.bluez", path: try ObjectPath("/org/bluez/\(adapter)"),
                               interface: "org.freedesktop.DBus.Properties", member: "Set",
                               arguments: [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.bool(on))], timeout: .seconds(40))
    }
}

/// Counts bluetoothd restarts as the central sees them: each time its state leaves `.poweredOn`.
final class RestartWatch: Sendable {
    struct Snapshot {
        var downs = 0
        var isDown = false
        var wasUp = false
        var lastUp: ContinuousClock.Instant?
    }
    private let state = Locked(Snapshot())

    init(_ central: CentralManager) {
        central.whenStateChanges().onSuccess(context: .immediate) { [state] s in
            state.withLock { w in
                if s == .poweredOn {
                    if w.isDown { w.lastUp = .now }
                    w.isDown = false
                    w.wasUp = true
                } else if w.wasUp && !w.isDown {
                    w.isDown = true
                    w.downs += 1
                }
            }
            say("central state: \(s)")
        }
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    /// Whether a restart can explain a failure of the cycle that began at `start` (state
    /// `before`): bluetoothd went away during it, was away when it began, or came back less than
    /// 60 s before it (the link from before the kill lingers up to 30 s in the restarted bluetoothd).
    func interfered(before: Snapshot, start: ContinuousClock.Instant) -> Bool {
        let now = snapshot
        if now.downs != before.downs || before.isDown { return true }
        if let up = before.lastUp, start - up < .seconds(60) { return true }
        return false
    }
}
