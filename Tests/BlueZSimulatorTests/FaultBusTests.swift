// FaultBusTests: every injected fault, from Swift and over org.bluecap.Simulator1.

import BlueZSimulator
import DBus
import Foundation
import Glibc
import Testing
import TestSupport
import Locking
import Timing

@Suite("Faults over D-Bus", .serialized, .timeLimit(.minutes(1)))
struct FaultBusTests {
    let hci0 = "/org/bluez/hci0"
    let address = "C0:FF:EE:00:00:01"

    @Test("a delay fault holds the reply for the given time, for the given number of calls")
    func delayFault() async throws {
        // The simulator on a manual clock: the delay passes only when the test says so.
        let clock = ManualClock()
        let h = try await BusHarness.start(clock: clock)
        defer { h.stop() }
        let delay = Duration.seconds(1)
        h.simulator.inject(MethodFault("org.bluez.Adapter1.StartDiscovery", action: .delay(delay), count: 1))
        let scheduled = clock.pendingCount
        let answered = Collector<String>()
        let hci0 = self.hci0
        Task {
            try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery")
            answered.append("delayed")
        }
        await clock.waitForPending(atLeast: scheduled + 1)  // the delayed call is held
        _ = clock.advance(by: delay - .milliseconds(1))
        #expect(answered.items.isEmpty, "answered before its delay")
        _ = clock.advance(by: .milliseconds(1))
        #expect(try await answered.wait(for: 1) == ["delayed"])
        // The fault was for one call: these are answered without the clock moving.
        let before = clock.now
        try await withDeadline(.seconds(10), "undelayed calls") {
            try await h.call(hci0, "org.bluez.Adapter1", "StopDiscovery")
            try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery")
        }
        #expect(clock.now == before)
    }

    @Test("an error fault replies with the BlueZ error N times; set over org.bluecap.Simulator1")
    func errorFaultOverDBus() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        try await h.call(BlueZSimulator.controlPath, BlueZSimulator.controlInterface, "InjectFault", [
            .string("org.bluez.Device1.Connect"), .string(device), .string("error"),
            .string("org.bluez.Error.Failed"), .string("le-connection-abort-by-remote"), .uint32(0), .int32(2),
        ])
        for _ in 0..<2 {
            #expect(await h.error(device, "org.bluez.Device1", "Connect")
                    == DBusRemoteError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote"))
        }
        try await h.connect(device)
    }

    @Test("a no-reply fault leaves the caller to time out")
    func noReplyFault() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        h.simulator.inject(MethodFault("org.bluez.Adapter1.StartDiscovery", action: .noReply, count: 1))
        do {
            try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery", timeout: .milliseconds(300))
            Issue.record("the call was answered")
        } catch {
            #expect(error == .timeout(after: .milliseconds(300)) || error.remoteName == "org.freedesktop.DBus.Error.NoReply")
        }
        try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery")
    }

    @Test("drop link: ServicesResolved=false, GATT objects removed, Connected=false")
    func dropLink() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        try await h.connect(device)
        let before = h.signals.items.count
        try await h.call(BlueZSimulator.controlPath, BlueZSimulator.controlInterface, "DropLink", [.objectPath(try ObjectPath(device))])
        try await h.waitSignal("Connected false") { isChanged($0, device, "Connected", .bool(false)) }
        let after = Array(h.signals.items[before...])
        let a = try #require(after.firstIndex { isChanged($0, device, "ServicesResolved", .bool(false)) })
        let b = try #require(after.firstIndex { isRemoved($0, device + "/service0001") })
        let c = try #require(after.firstIndex { isChanged($0, device, "Connected", .bool(false)) })
        #expect(a < b && b < c)
    }

    @Test("power off: devices disconnect, Discovering=false, Powered=false; calls then answer NotReady")
    func powerCycle() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        try await h.connect(device)
        h.simulator.setPowered(adapter: 0, false)
        try await h.waitSignal("Powered false") { isChanged($0, "/org/bluez/hci0", "Powered", .bool(false)) }
        // All three arrive; their order is not part of the contract.
        try await h.waitSignal("Connected false") { isChanged($0, device, "Connected", .bool(false)) }
        try await h.waitSignal("Discovering false") { isChanged($0, "/org/bluez/hci0", "Discovering", .bool(false)) }
        #expect(await h.error(hci0, "org.bluez.Adapter1", "StartDiscovery")?.name == "org.bluez.Error.NotReady")
        try await h.call(hci0, "org.freedesktop.DBus.Properties", "Set", [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.bool(true))])
        try await h.waitSignal("Powered true") { isChanged($0, "/org/bluez/hci0", "Powered", .bool(true)) }
        try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery")
    }

    @Test("removing and adding an adapter: InterfacesRemoved of its devices and hciN, then InterfacesAdded")
    func adapterUnplug() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        h.simulator.removeAdapter(0)
        try await h.waitSignal("hci0 removed") { isRemoved($0, "/org/bluez/hci0") }
        #expect(h.signals.items.contains { isRemoved($0, device) })
        #expect(try await h.managedObjects()["/org/bluez/hci0"] == nil)
        #expect(h.simulator.addAdapter() == 0)
        try await h.waitSignal("hci0 added") { isAdded($0, "/org/bluez/hci0") }
    }

    @Test("the ServicesResolved race: ServicesResolved=true arrives before the GATT objects")
    func servicesResolvedEarly() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        h.simulator.setServicesResolvedEarly(.milliseconds(50))
        try await h.call(device, "org.bluez.Device1", "Connect")
        try await h.waitSignal("service") { isAdded($0, device + "/service0001") }
        let items = h.signals.items
        let resolved = try #require(items.firstIndex { isChanged($0, device, "ServicesResolved", .bool(true)) })
        let service = try #require(items.firstIndex { isAdded($0, device + "/service0001") })
        #expect(resolved < service)
    }

    @Test("a scan storm of 100 devices at 20 Hz sends RSSI PropertiesChanged for every device")
    func scanStorm() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        try await h.call(hci0, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties(["RSSI": .int16(-127)])])
        try await h.call(hci0, "org.bluez.Adapter1", "StartDiscovery")
        h.simulator.startRSSIStorm(devices: 100, hz: 20, adapters: [0])
        let counter = Collector<Int>()
        let sub = h.client.subscribe(rule: MatchRule(sender: h.simulator.uniqueName, interface: "org.freedesktop.DBus.Properties",
                                                     member: "PropertiesChanged", arg0: "org.bluez.Device1")) { m in
            if changedProperties(m)?["RSSI"] != nil { counter.append(1) }
        }
        try await sub.established()
        try await counter.wait(for: 400, timeout: .seconds(5))
        h.simulator.stopRSSIStorm()
        sub.cancel()
    }

    @Test("release and re-take org.bluez: NameOwnerChanged to \"\" then to a new unique name, state fresh")
    func restart() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        let owners = Collector<String>()
        let watch = h.client.watchNameOwner("org.bluez") { owners.append($0 ?? "") }
        try await owners.wait(for: 1)
        let first = h.simulator.uniqueName
        try await h.simulator.restart()
        let seen = try await owners.wait(for: 3)
        #expect(seen[0] == first)
        #expect(seen[1] == "")
        #expect(seen[2] == h.simulator.uniqueName && seen[2] != first)
        let objects = try await h.managedObjects()
        #expect(objects["/org/bluez/hci0"] != nil)
        #expect(objects[device] == nil)
        watch.cancel()
    }

    @Test("restart() 200 times back to back: each takes org.bluez again on a new connection")
    func restartsBackToBack() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        var names: Set<String> = [h.simulator.uniqueName]
        for _ in 0..<200 {
            try await h.simulator.restart()
            names.insert(h.simulator.uniqueName)
        }
        #expect(names.count == 201)
        let objects = try await h.managedObjects()
        #expect(objects["/org/bluez/hci0"] != nil)
    }

    @Test("a burst of 20,000 notifications as PropertiesChanged signals: all emitted, all of a second burst received")
    func notificationBurst() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let hr = try await notifyingHeartRate(h)
        h.stopRecording()
        // Emission rate: nobody subscribes to these signals while they are emitted.
        // (Rates are measured by `bluecap-bench`, not asserted here.)
        let result = await h.simulator.burst(peripheral: address, characteristic: "2A37", count: 20_000)
        #expect(result.delivered == 20_000)
        // End to end: a subscribed client receives every value of a second burst of 20,000.
        let (received, sub2) = try await countPropertiesChanged(h, hr)
        let clock = ContinuousClock()
        let t0 = clock.now
        _ = await h.simulator.burst(peripheral: address, characteristic: "2A37", count: 20_000)
        try await received.wait(for: 20_000, timeout: .seconds(60))
        print("end to end: 20000 values received in \(clock.now - t0)")
        sub2.cancel()
        #expect(h.simulator.sync { $0.store.property(hr, "org.bluez.GattCharacteristic1", "Value") } == .bytes([0x1f, 0x4e, 0, 0]))
    }

    @Test("StartNotifyPace over org.bluecap.Simulator1: 20 values at 100 Hz arrive paced, none lost; its status counts them")
    func pacedNotifications() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let hr = try await notifyingHeartRate(h)
        let (received, sub) = try await countPropertiesChanged(h, hr)
        let clock = ContinuousClock()
        let t0 = clock.now
        let found = try await h.call(BlueZSimulator.controlPath, BlueZSimulator.controlInterface, "StartNotifyPace", [
            .array(element: .string, [.string(address.lowercased())]), .string("2A37"), .double(100), .uint32(20)])
        #expect(found.body.first == .uint32(1))
        try await received.wait(for: 20, timeout: .seconds(10))
        // The 20th value is due 190 ms after the start: a burst would have sent it at once.
        #expect(clock.now - t0 >= .milliseconds(190))
        let status = try await h.call(BlueZSimulator.controlPath, BlueZSimulator.controlInterface, "NotifyPaceStatus")
        #expect(status.body == [.uint32(20), .uint32(20), .bool(false)])
        #expect(h.simulator.sync { $0.store.property(hr, "org.bluez.GattCharacteristic1", "Value") } == .bytes([19, 0, 0, 0]))
        sub.cancel()
    }

    @Test("a burst of 200,000 notifications through AcquireNotify is lossless")
    func acquiredNotificationBurst() async throws {
        let h = try await BusHarness.start()
        defer { h.stop() }
        let device = try await h.discover(testPeripheral(address))
        try await h.connect(device)
        let hr = try await h.gattPath(device, "2A37")
        var reply: Message? = try await h.call(hr, "org.bluez.GattCharacteristic1", "AcquireNotify", [noOptions])
        let fd: FileDescriptor? = if case .unixFD(let f)? = reply?.body[0] { f } else { nil }
        reply = nil
        let socket = try #require(fd)
        var size: Int32 = 4 << 20
        setsockopt(socket.rawValue, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let reader = DatagramCounter(fd: socket.rawValue)
        reader.start()
        let result = await h.simulator.burst(peripheral: address, characteristic: "2A37", count: 200_000)
        let received = reader.stop(expecting: result.delivered)
        #expect(received == result.delivered)
        #expect(result.delivered == 200_000)
    }

    // MARK: Helpers

    /// Connects the test peripheral and starts notifying its 2A37; returns that characteristic's path.
    private func notifyingHeartRate(_ h: BusHarness) async throws -> String {
        let device = try await h.discover(testPeripheral(address))
        try await h.connect(device)
        let hr = try await h.gattPath(device, "2A37")
        try await h.call(hr, "org.bluez.GattCharacteristic1", "StartNotify")
        return hr
    }

    /// Counts the simulator's PropertiesChanged signals on `path` (one item each, not decoded
    /// further), from an established subscription on.
    private func countPropertiesChanged(_ h: BusHarness, _ path: String) async throws -> (Collector<Int>, SignalSubscription) {
        let received = Collector<Int>()
        let subscription = h.client.subscribe(rule: MatchRule(sender: h.simulator.uniqueName, interface: "org.freedesktop.DBus.Properties",
                                                              member: "PropertiesChanged", path: try ObjectPath(path))) { _ in received.append(1) }
        try await subscription.established()
        return (received, subscription)
    }
}

/// Reads datagrams on its own thread and counts them (the client side of an acquired socket).
final class DatagramCounter: Sendable {
    private let fd: Int32
    private let count = Locked(0)
    private let done = DispatchSemaphore(value: 0)

    init(fd: Int32) { self.fd = fd }

    func start() {
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 600)
            while recv(fd, &buffer, buffer.count, 0) > 0 {
                count.withLock { $0 += 1 }
            }
            done.signal()
        }
    }

    /// Waits (≤ 10 s) until the reader is idle after `expected` datagrams; returns the count.
    func stop(expecting expected: Int) -> Int {
        _ = done.wait(timeout: .now() + 10)
        return count.withLock { $0 }
    }
}
