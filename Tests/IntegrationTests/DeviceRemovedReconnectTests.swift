// A reconnection whose device object bluetoothd removed: a peer that vanished (out of range,
// supervision timeout) and whose object went away (bluetoothd removing an unpaired device it no
// longer hears, another client's Adapter1.RemoveDevice). reconnect() used to send
// Device1.Connect to a path that no longer exists and push an error, then nothing: no `.connect`
// when the peer returned, no `.timeout` or `.giveUp`. The attempt now looks for the device (a
// discovery for its address) and connects when its object is back; its timer still decides.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Central: reconnecting a peripheral whose device object was removed", .serialized, .timeLimit(.minutes(1)))
struct DeviceRemovedReconnectTests {
    static let address = "C0:FF:EE:00:05:41"

    /// A connected SensorTag that then vanished: out of range (the link dropped), its device
    /// object removed, by `Adapter1.RemoveDevice` or, with `byTemporaryTimeout`, by the
    /// simulator's bluetoothd itself (the dropped device, neither paired nor trusted, is
    /// temporary again: removed `temporaryDeviceTimeout` later, here 300 ms). Returns after
    /// `.disconnect`, with no object at the peripheral's path.
    static func vanished(connectionTimeout: Duration, byTemporaryTimeout: Bool = false) async throws -> (CentralRig, Peripheral, ConnectionEvents) {
        let rig = try await CentralRig.start()
        do {
            rig.simulator.sync { $0.temporaryDeviceTimeout = .milliseconds(300) }
            rig.simulator.add(simulatedSensorTag(address))
            let p = try await rig.discover(address)
            let events = rig.connect(p, disconnectRetries: 1, connectionTimeout: connectionTimeout)
            try await events.events.wait(for: 1, timeout: .seconds(5))
            rig.simulator.setRange(address, adapters: [])
            try await events.events.wait(for: 2, timeout: .seconds(5))
            if !byTemporaryTimeout {
                let removal = rig.simulator.sync { core -> BlueZErrorReply? in
                    do throws(BlueZErrorReply) { try core.removeDevice(adapter: 0, path: p.identifier) } catch { return error }
                    return nil
                }
                #expect(removal == nil, "RemoveDevice: \(String(describing: removal))")
            }
            try await waitUntil("the device object removed") { !rig.simulator.sync { $0.devicePaths(adapter: 0) }.contains(p.identifier) }
            return (rig, p, events)
        } catch {
            rig.stop()
            throw error
        }
    }

    static func discovering(_ rig: CentralRig) -> Bool {
        rig.simulator.sync { $0.store.property("/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") } == .bool(true)
    }

    @Test("reconnect() looks for the device while it is away and connects when it is heard again: .connect on the same stream, no failure, reads work, the discovery ends")
    func reconnectsWhenTheDeviceReturns() async throws {
        let (rig, p, events) = try await Self.vanished(connectionTimeout: .seconds(20))
        defer { rig.stop() }
        p.reconnect()
        try await waitUntil("a discovery for the address") { Self.discovering(rig) }
        #expect(events.events.items == [.connect, .disconnect])
        #expect(events.failures.items.isEmpty, "\(events.failures.items)")
        rig.simulator.setRange(Self.address, adapters: nil)
        try await events.events.wait(for: 3, timeout: .seconds(10))
        #expect(events.events.items == [.connect, .disconnect, .connect])
        #expect(events.failures.items.isEmpty, "\(events.failures.items)")
        #expect(p.isConnected)
        let service = try await rig.services(of: p)
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        #expect(try await period.read().value.value(as: UInt8.self) == 100)
        try await waitUntil("the discovery ended") { !Self.discovering(rig) }
    }

    @Test("a device that never returns: the attempt's timer decides (.giveUp with no retries left), no failure pushed, the discovery ends")
    func givesUpWhenTheDeviceStaysAway() async throws {
        let (rig, p, events) = try await Self.vanished(connectionTimeout: .milliseconds(800))
        defer { rig.stop() }
        p.reconnect()
        try await waitUntil("a discovery for the address") { Self.discovering(rig) }
        try await events.events.wait(for: 3, timeout: .seconds(5))
        #expect(events.events.items == [.connect, .disconnect, .giveUp])
        #expect(events.failures.items.isEmpty, "\(events.failures.items)")
        try await waitUntil("the discovery ended") { !Self.discovering(rig) }
        #expect(!p.isConnected)
    }

    @Test("bluetoothd removes a dropped device that is neither paired nor trusted TemporaryTimeout later; reconnect() then finds it when it is back")
    func temporaryAfterTheDrop() async throws {
        let (rig, p, events) = try await Self.vanished(connectionTimeout: .seconds(20), byTemporaryTimeout: true)
        defer { rig.stop() }
        p.reconnect()
        try await waitUntil("a discovery for the address") { Self.discovering(rig) }
        rig.simulator.setRange(Self.address, adapters: nil)
        try await events.events.wait(for: 3, timeout: .seconds(10))
        #expect(events.events.items == [.connect, .disconnect, .connect])
        #expect(events.failures.items.isEmpty, "\(events.failures.items)")
    }

    @Test("a trusted device keeps its object after the drop, past TemporaryTimeout")
    func trustedDeviceStays() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.sync { $0.temporaryDeviceTimeout = .milliseconds(300) }
        rig.simulator.add(simulatedSensorTag(Self.address))
        let p = try await rig.discover(Self.address)
        let events = rig.connect(p, disconnectRetries: 1)
        try await events.events.wait(for: 1, timeout: .seconds(5))
        _ = try await p.trust(true).value
        rig.simulator.setRange(Self.address, adapters: [])
        try await events.events.wait(for: 2, timeout: .seconds(5))
        // Past the timeout: a removal would have come by now (the untrusted case above).
        try await Task.sleep(for: .milliseconds(900))
        #expect(rig.simulator.sync { $0.devicePaths(adapter: 0) }.contains(p.identifier))
    }
}

