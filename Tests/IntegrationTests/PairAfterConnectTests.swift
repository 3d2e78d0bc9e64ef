// Pairing the moment the connection is reported, against the simulator's ATT-channel window
// (BlueZSimulator.attChannelDelay): bluetoothd sets Device1.Connected at the controller's
// connection event and answers Device1.Connect once its ATT channel is up; a Pair in between is
// refused (InProgress, bluetoothd 5.82) or never answered (5.66). `.connect` comes with the
// Connect's answer. Then bluetoothd discovers the services, and a Pair whose pairing ends during
// that discovery is never answered: pair() waits for ServicesResolved first.
import BlueCapKit
import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central: pair() right after .connect", .serialized, .timeLimit(.minutes(1)))
struct PairAfterConnectTests {
    static let address = "C0:FF:EE:00:05:21"

    @Test("with Connected=true 300 ms before the Connect's answer: .connect waits for the answer, and pair() called from the .connect callback pairs")
    func pairFromTheConnectCallback() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.attChannelDelay = .milliseconds(300)
        rig.simulator.add(simulatedSensorTag(Self.address))
        let p = try await rig.discover(Self.address)
        let connectedSeen = Collector<Bool>()
        let paired = Collector<String>()
        p.connect(connectionTimeout: .seconds(5)).onSuccess(context: .immediate) { update in
            guard update.connectionEvent == .connect else { return }
            connectedSeen.append(update.peripheral.isConnected)
            update.peripheral.pair(timeout: .seconds(10)).onComplete(context: .immediate) { result in
                switch result {
                case .success: paired.append("paired")
                case .failure(let error): paired.append("\(error)")
                }
            }
        }
        #expect(try await paired.wait(for: 1, timeout: .seconds(15)) == ["paired"])
        #expect(connectedSeen.items == [true])
        #expect(p.isPaired)
    }

    @Test("the window is real: Device1.Pair sent while bluetoothd shows Connected=true but has not answered the Connect fails InProgress")
    func pairInsideTheWindowIsRefused() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.attChannelDelay = .milliseconds(500)
        rig.simulator.add(simulatedSensorTag(Self.address))
        let p = try await rig.discover(Self.address)
        let events = rig.connect(p)
        // Connected=true is out; the Connect is not answered yet: no .connect.
        try await waitUntil("Device1.Connected true") {
            rig.simulator.sync { $0.store.property(p.identifier, "org.bluez.Device1", "Connected") } == .bool(true)
        }
        #expect(events.events.items.isEmpty, "\(events.events.items)")
        let device = Device1(connection: rig.client, path: try ObjectPath(p.identifier))
        do throws(BlueZError) {
            try await device.pair(timeout: .seconds(5))
            Issue.record("Pair inside the window succeeded")
        } catch {
            #expect(error.kind == .inProgress, "\(error)")
        }
        // The answer comes: .connect, and pairing works.
        #expect(try await events.events.wait(for: 1, timeout: .seconds(5)) == [.connect])
        try await p.pair(timeout: .seconds(10)).value
        #expect(p.isPaired)
    }

    @Test("the link up, the services still being discovered: pair() waits for ServicesResolved, and the answer comes (bluetoothd drops a Pair's answer when the pairing ends during that discovery)")
    func pairWaitsForTheDiscovery() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(simulatedSensorTag(Self.address).delays(connection: .milliseconds(5), discovery: .milliseconds(400)))
        let p = try await rig.discover(Self.address)
        let events = rig.connect(p)
        #expect(try await events.events.wait(for: 1, timeout: .seconds(5)) == [.connect])
        #expect(!p.servicesResolved, "the discovery takes 400 ms")
        try await p.pair(timeout: .seconds(5)).value
        #expect(p.isPaired && p.servicesResolved)
    }

    @Test("the simulator drops the answer as bluetoothd does: Device1.Pair sent during the discovery pairs but is never answered")
    func theDroppedAnswerIsReal() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.add(simulatedSensorTag(Self.address).delays(connection: .milliseconds(5), discovery: .seconds(2)))
        let p = try await rig.discover(Self.address)
        let events = rig.connect(p)
        #expect(try await events.events.wait(for: 1, timeout: .seconds(5)) == [.connect])
        let device = Device1(connection: rig.client, path: try ObjectPath(p.identifier))
        do throws(BlueZError) {
            try await device.pair(timeout: .milliseconds(500))
            Issue.record("Pair during the discovery was answered")
        } catch {
            #expect(error.kind == .timeout, "\(error)")
        }
        try await waitUntil("paired") { p.isPaired }
    }
}
