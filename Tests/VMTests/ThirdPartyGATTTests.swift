// The third-party peer tier's GATT edge cases: BlueCapKit on the bridged RootCanal adapter against
// the Bumble GATT server of Scripts/bluez-vm/peers/thirdparty (peers.GattEdge), which answers the
// way a real stack does: long values across a 23-byte MTU, an ATT error, a read it never answers,
// indications. Skipped unless steps/thirdparty sets BLUECAP_THIRDPARTY_PEER (the peer's address)
// and BLUECAP_THIRDPARTY_ADAPTER (the bridged adapter).

import BlueCapKit
import DBus
import Foundation
import Testing
import TestSupport

/// The peer steps/thirdparty started for these tests.
enum ThirdPartyPeer {
    static let environment = ProcessInfo.processInfo.environment
    static let address = environment["BLUECAP_THIRDPARTY_PEER"] ?? ""
    static let adapter = environment["BLUECAP_THIRDPARTY_ADAPTER"] ?? "hci2"
    /// The ATT MTU the peer's server allows (peers.GattEdge's `max_mtu`).
    static let mtu = Int(environment["BLUECAP_THIRDPARTY_MTU"] ?? "") ?? 517
    static let enabled = VM.enabled && !address.isEmpty

    static func uuid(_ short: UInt16) -> BLEUUID { BLEUUID(string: String(format: "B1CA%04X-0451-4000-B000-000000000000", short))! }
    static let service = uuid(0x0000)
    static let long = uuid(0x0001), error = uuid(0x0002), silent = uuid(0x0003), indicate = uuid(0x0004)
    /// The long characteristic's initial value: 400 bytes, byte i = i mod 251.
    static let longValue = Data((0..<400).map { UInt8($0 % 251) })
}

@Suite("Third-party peer: GATT edge cases", .serialized,
       .enabled(if: ThirdPartyPeer.enabled, "needs steps/thirdparty: BLUECAP_VM=1 and BLUECAP_THIRDPARTY_PEER"))
struct ThirdPartyGATTTests {
    /// Connects the peer by address on the bridged adapter, discovers the edge service, runs
    /// `body`, disconnects.
    /// Each test starts with the peer disconnected: a link the previous test's clean-up asked to
    /// close is still up for a moment after (bluetoothd answers `Disconnect` before it emits
    /// Connected=false), and a test connecting meanwhile would get a link about to drop.
    static func withPeer(_ body: (CentralManager, Peripheral, Service) async throws -> Void) async throws {
        let session = BluetoothSession()
        let bus = try session.testConnection()
        try await waitDisconnected(bus)
        let manager = CentralManager(adapter: ThirdPartyPeer.adapter, session: session)
        try await manager.whenPoweredOn(timeout: .seconds(15)).value
        let p = try await manager.connect(address: ThirdPartyPeer.address, timeout: .seconds(30)).value
        do {
            _ = try await p.discoverServices([ThirdPartyPeer.service], timeout: .seconds(30)).value
            let service = try #require(p.service(ThirdPartyPeer.service))
            _ = try await service.discoverCharacteristics(timeout: .seconds(15)).value
            try await body(manager, p, service)
        } catch {
            p.terminate(); manager.reset()
            throw error
        }
        p.terminate()
        manager.reset()
        try await waitDisconnected(bus)
    }

    /// Waits (re-checking after each org.bluez signal, at most 30 s) until bluetoothd reports the
    /// peer's device not connected.
    static func waitDisconnected(_ bus: Connection) async throws {
        let path = try ObjectPath(VM.devicePath(ThirdPartyPeer.adapter, ThirdPartyPeer.address))
        let down = try await VM.recheck(bus, timeout: .seconds(30)) { () async -> Bool? in
            if case .bool(true)? = try? await VM.property(bus, path, "org.bluez.Device1", "Connected") { return nil }
            return true
        }
        if down != true { throw VMTestError("the peer's link still up 30 s after the disconnection") }
    }

    @Test("a 400-byte value read and written whole across the peer's MTU (long read, prepared write)", .timeLimit(.minutes(3)))
    func longValues() async throws {
        try await Self.withPeer { _, _, service in
            let c = try #require(service.characteristic(ThirdPartyPeer.long))
            _ = try await c.read(timeout: .seconds(30)).value
            #expect(c.value == ThirdPartyPeer.longValue, "read \(c.value?.count ?? -1) bytes at MTU \(String(describing: c.mtu))")
            // GattCharacteristic1.MTU exists from bluetoothd 5.62 on (5.55 has none: nil).
            if ThirdPartyPeer.mtu == 23, VM.bluezVersion != "5.55" {
                #expect(c.mtu == 23, "the peer allows MTU 23; BlueZ reports \(String(describing: c.mtu))")
            }
            let written = Data((0..<400).map { UInt8(255 - $0 % 200) })
            _ = try await c.write(data: written, timeout: .seconds(30)).value
            _ = try await c.read(timeout: .seconds(30)).value
            #expect(c.value == written, "read back \(c.value?.count ?? -1) bytes after a 400-byte write")
        }
    }

    @Test("a read the peer answers with an ATT error fails with that error, and the link stays usable", .timeLimit(.minutes(3)))
    func attErrorMapped() async throws {
        try await Self.withPeer { _, _, service in
            let c = try #require(service.characteristic(ThirdPartyPeer.error))
            do {
                _ = try await c.read(timeout: .seconds(20)).value
                Issue.record("the read succeeded; the peer answers it with ATT error 0x80")
            } catch let error as BlueCapError {
                #expect(error.attError?.code == 0x80, "\(error) (kind \(error.kind), ATT \(String(describing: error.attError)))")
                #expect(error.kind != .timeout, "\(error)")
            }
            let long = try #require(service.characteristic(ThirdPartyPeer.long))
            _ = try await long.read(timeout: .seconds(30)).value
            #expect(long.value?.count == 400)
        }
    }

    @Test("a peer that never answers one read: our timeout fires; from bluetoothd's ATT timeout on, the first call answered 'Not connected' ends the connection at once (.disconnect within 0.5 s); the reconnection reads",
          .timeLimit(.minutes(4)))
    func silentPeerRecovers() async throws {
        try await Self.withPeer { _, p, service in
            // Follow the link as the docs say an app does: on `.disconnect`, `reconnect()`.
            let clock = ContinuousClock()
            let events = Collector<ConnectionEvent>(), eventTimes = Collector<ContinuousClock.Instant>()
            p.connect(disconnectRetries: 3, connectionTimeout: .seconds(20)).onSuccess(context: .immediate) { update in
                eventTimes.append(clock.now)
                events.append(update.connectionEvent)
                if update.connectionEvent == .disconnect { update.peripheral.reconnect(withDelay: .milliseconds(500)) }
            }
            #expect(try await events.wait(for: 1, timeout: .seconds(10)) == [.connect])
            let silent = try #require(service.characteristic(ThirdPartyPeer.silent))
            let start = clock.now
            do {
                _ = try await silent.read(timeout: .seconds(5)).value
                Issue.record("the read succeeded; the peer never answers the first one")
            } catch let error as BlueCapError {
                #expect(error.kind == .timeout, "\(error)")
            }
            #expect(clock.now - start < .seconds(15), "the 5 s timeout fired after \(clock.now - start)")
            #expect(p.isConnected, "our own timeout does not end the connection")
            // ATT allows one request at a time: the next read waits for the unanswered one until
            // bluetoothd's 30 s transaction timeout, which closes the ATT bearer. From then on
            // bluetoothd answers every GATT call "Not connected" while Device1.Connected stays
            // true for about 2 s: the first such answer ends our connection at once.
            let long = try #require(service.characteristic(ThirdPartyPeer.long))
            var notConnectedAt: ContinuousClock.Instant?
            for n in 1...2 where notConnectedAt == nil {
                do {
                    _ = try await long.read(timeout: .seconds(45)).value
                    Issue.record("read \(n) after the silent one succeeded")
                    break
                } catch let error as BlueCapError {
                    print("thirdparty silent peer: read \(n) after the silent one: \(error) (\(clock.now - start) after the silent read)")
                    #expect(error.kind != .timeout, "it should fail when bluetoothd gives up, not at our 45 s: \(error)")
                    guard error.kind == .notConnected, error.bluez != nil else { continue }
                    notConnectedAt = clock.now
                    #expect(!p.isConnected, "still connected when the operation failed \"Not connected\"")
                }
            }
            let firstNotConnected = try #require(notConnectedAt, "no read was answered \"Not connected\" by bluetoothd")
            // The drop is reported at once and the reconnection comes up.
            let after = try await events.wait(for: 3, timeout: .seconds(90))
            #expect(Array(after.prefix(3)) == [.connect, .disconnect, .connect], "\(after)")
            let disconnectAt = eventTimes.items[1]
            print("thirdparty silent peer: .disconnect \(disconnectAt - firstNotConnected) from the first \"Not connected\" answer")
            #expect(disconnectAt - firstNotConnected <= .milliseconds(500),
                    ".disconnect came \(disconnectAt - firstNotConnected) after the first \"Not connected\"")
            print("thirdparty silent peer: reconnected \(eventTimes.items[2] - firstNotConnected) after the first \"Not connected\", connected \(p.isConnected)")
            _ = try await p.discoverServices([ThirdPartyPeer.service], timeout: .seconds(30)).value
            let again = try #require(p.service(ThirdPartyPeer.service))
            _ = try await again.discoverCharacteristics(timeout: .seconds(15)).value
            let c = try #require(again.characteristic(ThirdPartyPeer.long))
            do {
                _ = try await c.read(timeout: .seconds(30)).value
            } catch {
                print("thirdparty silent peer: read after the reconnection \(clock.now - firstNotConnected) after the first \"Not connected\": \(error); events \(events.items)")
                throw error
            }
            #expect(c.value?.count == 400, "read after the reconnection: \(c.value?.count ?? -1) bytes")
            _ = try await again.characteristic(ThirdPartyPeer.silent)?.read(timeout: .seconds(30)).value
            #expect(again.characteristic(ThirdPartyPeer.silent)?.value == Data("ok".utf8), "the peer answers its later reads")
        }
    }

    @Test("indications from the peer arrive once each, in order", .timeLimit(.minutes(3)))
    func indications() async throws {
        try await Self.withPeer { _, _, service in
            let c = try #require(service.characteristic(ThirdPartyPeer.indicate))
            let updates = c.receiveNotificationUpdates(capacity: 100)
            let got = Collector<UInt8>()
            updates.onSuccess(context: .immediate) { update in
                if let b = update.data?.first { got.append(b) }
            }
            _ = try await c.startNotifying(timeout: .seconds(20)).value
            let values = try await got.wait(for: 5, timeout: .seconds(30))
            #expect(values == [1, 2, 3, 4, 5])
        }
    }
}

// MARK: - notification flood

extension ThirdPartyGATTTests {
    static let flood = ThirdPartyPeer.uuid(0x0005), floodCount = ThirdPartyPeer.uuid(0x0006)

    @Test("a peer notifying as fast as the link allows for 10 s: received, delivered, dropped and held add up to what it sent", .timeLimit(.minutes(3)))
    func notificationFloodAccounting() async throws {
        try await Self.withPeer { _, _, service in
            let c = try #require(service.characteristic(Self.flood))
            let count = try #require(service.characteristic(Self.floodCount))
            // A small stream capacity and a subscriber that falls behind: drops are expected, and
            // must be counted, not lost from the books.
            let updates = c.receiveNotificationUpdates(capacity: 16)
            let seen = Collector<UInt32>()
            updates.onSuccess(context: .immediate) { update in
                guard let d = update.data, d.count == 4 else { return }
                seen.append(d.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian })
            }
            _ = try await c.startNotifying(timeout: .seconds(20)).value
            // The peer makes its count readable once its 10 s are over (0xFFFFFFFF before).
            var sent: UInt32 = .max
            let clock = ContinuousClock(), deadline = clock.now + .seconds(60)
            while sent == .max && clock.now < deadline {
                try await Task.sleep(for: .seconds(2))
                _ = try await count.read(timeout: .seconds(20)).value
                sent = count.value.flatMap { $0.count == 4 ? $0.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian } : nil } ?? .max
            }
            try #require(sent != .max, "the peer never finished its flood")
            // What ATT delivered arrives before the read's reply on the same bearer: give the
            // socket's last datagrams a moment to be counted.
            var counts = c.notificationCounts
            for _ in 0..<20 where counts.received < Int(sent) {
                try await Task.sleep(for: .milliseconds(250))
                counts = c.notificationCounts
            }
            let values = seen.items
            print("thirdparty flood: peer sent \(sent), \(counts), subscriber saw \(values.count)")
            #expect(counts.received == Int(sent), "\(counts); peer sent \(sent)")
            #expect(counts.received == counts.delivered + counts.dropped + counts.held, "\(counts)")
            #expect(Set(values).count == values.count, "a notification delivered twice")
            #expect(values == values.sorted(), "notifications out of order")
            #expect(values.count == counts.delivered, "subscriber saw \(values.count), counts say \(counts.delivered) delivered")
        }
    }
}

// MARK: - a database that changes while connected

extension ThirdPartyGATTTests {
    static let swap = ThirdPartyPeer.uuid(0x0007)
    static let before = ThirdPartyPeer.uuid(0x0100), beforeValue = ThirdPartyPeer.uuid(0x0101)
    static let after = ThirdPartyPeer.uuid(0x0200), afterValue = ThirdPartyPeer.uuid(0x0201)

    /// Waits until the changes reported so far removed `removed` and added `added`; returns the
    /// added service.
    static func waitForChange(_ changes: Collector<ServicesChange>, removed: BLEUUID, added: BLEUUID,
                              seen: inout Int) async throws -> Service {
        var gone = false, new: Service?
        while !gone || new == nil {
            let items = try await changes.wait(for: seen + 1, timeout: .seconds(45))
            for change in items.dropFirst(seen) {
                gone = gone || change.removed.contains { $0.uuid == removed }
                new = new ?? change.added.first { $0.uuid == added }
                print("thirdparty services changed: \(change)")
            }
            seen = items.count
        }
        return try #require(new)
    }

    @Test("a peer that swaps a service and indicates Service Changed: whenServicesChange reports the removal and the addition, the old characteristic ends, the new one reads, the link stays up; and back again",
          .timeLimit(.minutes(4)))
    func servicesChangedWhileConnected() async throws {
        try await Self.withPeer { _, p, edge in
            let events = Collector<ConnectionEvent>()
            p.connect(connectionTimeout: .seconds(20)).onSuccess(context: .immediate) { events.append($0.connectionEvent) }
            #expect(try await events.wait(for: 1, timeout: .seconds(10)) == [.connect])
            _ = try await p.discoverServices([Self.before], timeout: .seconds(30)).value
            let first = try #require(p.service(Self.before))
            _ = try await first.discoverCharacteristics(timeout: .seconds(15)).value
            let old = try #require(first.characteristic(Self.beforeValue))
            // The read also waits for bluetoothd's subscription to Service Changed, written on the
            // one ATT channel before it (VMStaleStateTests).
            #expect(try await old.read(timeout: .seconds(20)).value.value == Data("before".utf8))
            let changes = Collector<ServicesChange>()
            p.whenServicesChange().onSuccess(context: .immediate) { changes.append($0) }
            let swap = try #require(edge.characteristic(Self.swap))

            _ = try await swap.write(data: Data([1]), timeout: .seconds(20)).value
            var seen = 0
            let second = try await Self.waitForChange(changes, removed: Self.before, added: Self.after, seen: &seen)
            #expect(p.service(Self.before) == nil, "the removed service is no longer among the peripheral's")
            do {
                _ = try await old.read(timeout: .seconds(10)).value
                Issue.record("the removed characteristic still reads")
            } catch let error as BlueCapError {
                // bluetoothd put the new service at the old one's handles, so the old object path
                // now holds another characteristic: the library says so rather than read it.
                print("thirdparty services changed: a read of the removed characteristic: \(error)")
                #expect(error.kind == .notFound, "\(error)")
            }
            _ = try await second.discoverCharacteristics(timeout: .seconds(15)).value
            let new = try #require(second.characteristic(Self.afterValue))
            #expect(try await new.read(timeout: .seconds(20)).value.value == Data("after".utf8))

            _ = try await swap.write(data: Data([1]), timeout: .seconds(20)).value
            let third = try await Self.waitForChange(changes, removed: Self.after, added: Self.before, seen: &seen)
            _ = try await third.discoverCharacteristics(timeout: .seconds(15)).value
            #expect(try await third.characteristic(Self.beforeValue)?.read(timeout: .seconds(20)).value.value == Data("before".utf8))
            let long = try #require(edge.characteristic(ThirdPartyPeer.long))
            _ = try await long.read(timeout: .seconds(30)).value
            #expect(long.value?.count == 400, "the unchanged service still reads")
            #expect(events.items == [.connect], "the link stayed up: \(events.items)")
            #expect(p.isConnected)
        }
    }
}
