// The third-party peer tier's link faults: BlueCapKit on the bridged RootCanal adapter against
// peers.Vanisher (Scripts/bluez-vm/peers/thirdparty), a Bumble peer that vanishes in the middle of
// a write: the bridge takes the link down and tells the kernel it ended with reason 0x08
// (Connection Timeout: the supervision timeout a peer going out of range causes), and the peer
// stays silent for 5 s before it advertises again. Skipped unless steps/thirdparty sets
// BLUECAP_THIRDPARTY_PEER.

import BlueCapKit
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Third-party peer: link faults", .serialized,
       .enabled(if: ThirdPartyPeer.enabled, "needs steps/thirdparty: BLUECAP_VM=1 and BLUECAP_THIRDPARTY_PEER"))
struct ThirdPartyLinkTests {
    /// Written: the peer vanishes. Read: "here".
    static let vanish = ThirdPartyPeer.uuid(0x0011), here = ThirdPartyPeer.uuid(0x0012)

    /// Follows `p`'s connection as the docs say an app does (on `.disconnect`: `beforeReconnect`,
    /// then `reconnect()`), writes the characteristic that makes the peer vanish, and checks what
    /// the user sees: the write fails when the link goes (not at its 20 s), the stream brings
    /// `.disconnect` and, once the peer is back, `.connect` (within `returnWithin`) and never
    /// fails, and a read of the new link's GATT objects (bluetoothd may have made new ones) works.
    /// `label` starts the lines it prints.
    static func vanishAndReturn(_ p: Peripheral, _ service: Service, label: String, connectionTimeout: Duration,
                                returnWithin: Duration,
                                beforeReconnect: @escaping @Sendable (Peripheral) async throws -> Void = { _ in }) async throws {
        let clock = ContinuousClock()
        let events = Collector<ConnectionEvent>(), eventTimes = Collector<ContinuousClock.Instant>()
        let failures = Collector<String>()
        p.connect(disconnectRetries: 3, connectionTimeout: connectionTimeout).onComplete(context: .immediate) { result in
            switch result {
            case .success(let update):
                eventTimes.append(clock.now)
                events.append(update.connectionEvent)
                guard update.connectionEvent == .disconnect else { return }
                Task {
                    do { try await beforeReconnect(update.peripheral) } catch { failures.append("before reconnect(): \(error)") }
                    update.peripheral.reconnect()
                }
            case .failure(let error):
                failures.append("\(error)")
            }
        }
        #expect(try await events.wait(for: 1, timeout: .seconds(10)) == [.connect])
        let vanish = try #require(service.characteristic(Self.vanish))
        let start = clock.now
        do {
            _ = try await vanish.write(data: Data([1]), timeout: .seconds(20)).value
            Issue.record("the write succeeded; the peer vanishes instead of answering")
        } catch let error as BlueCapError {
            print("\(label): the write failed \(clock.now - start) after it was sent: \(error)")
            #expect(error.kind != .timeout, "it should fail when the link goes, not at its 20 s: \(error)")
        }
        let after = try await events.wait(for: 3, timeout: returnWithin)
        #expect(Array(after.prefix(3)) == [.connect, .disconnect, .connect], "\(after)")
        #expect(failures.items.isEmpty, "\(failures.items)")
        let times = eventTimes.items
        print("\(label): .disconnect \(times[1] - start) after the write, .connect again \(times[2] - times[1]) later")
        _ = try await p.discoverServices([ThirdPartyPeer.service], timeout: .seconds(30)).value
        let again = try #require(p.service(ThirdPartyPeer.service))
        _ = try await again.discoverCharacteristics(timeout: .seconds(15)).value
        let here = try #require(again.characteristic(Self.here))
        _ = try await here.read(timeout: .seconds(20)).value
        #expect(here.value == Data("here".utf8), "read \(String(describing: here.value))")
    }

    @Test("the peer vanishes mid-write (supervision timeout, reason 0x08) and returns: the write fails when the link goes, .disconnect, reconnect() brings .connect once it is back, a read works", .timeLimit(.minutes(3)))
    func supervisionTimeoutMidWrite() async throws {
        try await ThirdPartyGATTTests.withPeer { _, p, service in
            try await Self.vanishAndReturn(p, service, label: "thirdparty vanish", connectionTimeout: .seconds(30),
                                           returnWithin: .seconds(60))
        }
    }

    @Test("the peer vanishes mid-write and its device object is removed before reconnect() (bluetoothd 5.66 does it TemporaryTimeout after the drop of an unpaired device): the attempt looks for the device and connects once it is back", .timeLimit(.minutes(3)))
    func deviceObjectGoneAfterVanishing() async throws {
        try await ThirdPartyGATTTests.withPeer { _, p, service in
            // Before reconnect(): remove the device object, as bluetoothd does 30 s after the drop
            // of an unpaired, untrusted device (its failed-bonding path makes it temporary).
            let remover = BluetoothSession()
            defer { withExtendedLifetime(remover) {} }
            let bus = try remover.testConnection()
            try await Self.vanishAndReturn(p, service, label: "thirdparty vanish, object removed", connectionTimeout: .seconds(40),
                                           returnWithin: .seconds(90)) { peripheral in
                _ = try await bus.call(destination: "org.bluez", path: try ObjectPath("/org/bluez/\(ThirdPartyPeer.adapter)"),
                                       interface: "org.bluez.Adapter1", member: "RemoveDevice",
                                       arguments: [.objectPath(try ObjectPath(peripheral.identifier))], timeout: .seconds(10))
            }
        }
    }
}
