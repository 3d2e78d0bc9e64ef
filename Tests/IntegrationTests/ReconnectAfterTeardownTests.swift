// Reconnecting the moment a link is reported down, against the simulator's ATT-teardown window
// (BlueZSimulator.attTeardownDelay): bluetoothd 5.82 answers Device1.Disconnect and sends
// Connected=false before the kernel's disconnection event releases the link's ATT bearer, and a
// Device1.Connect meanwhile fails Failed "Operation already in progress" (device_connect_le's
// -EALREADY). The library retries it as a transient error, as it does InProgress.
import BlueCapKit
import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Central: reconnect() right after the link went down", .serialized, .timeLimit(.minutes(1)))
struct ReconnectAfterTeardownTests {
    static let address = "C0:FF:EE:00:05:31"

    /// A peripheral connected, then disconnected by us: `isConnected` false, bluetoothd still
    /// holding the link's ATT bearer for `window`.
    static func disconnected(window: Duration) async throws -> (CentralRig, Peripheral, ConnectionEvents) {
        let rig = try await CentralRig.start()
        do {
            rig.simulator.attTeardownDelay = window
            rig.simulator.add(simulatedSensorTag(address))
            let p = try await rig.discover(address)
            let events = rig.connect(p)
            try await events.events.wait(for: 1, timeout: .seconds(5))
            p.disconnect()
            try await waitUntil("disconnected") { !p.isConnected }
            return (rig, p, events)
        } catch {
            rig.stop()
            throw error
        }
    }

    @Test("the window is real: Device1.Connect sent after Connected=false, while the old ATT bearer lingers, fails Failed 'Operation already in progress'")
    func connectInsideTheWindowIsRefused() async throws {
        let (rig, p, _) = try await Self.disconnected(window: .seconds(2))
        defer { rig.stop() }
        let device = Device1(connection: rig.client, path: try ObjectPath(p.identifier))
        do throws(BlueZError) {
            try await device.connect(timeout: .seconds(5))
            Issue.record("Connect inside the window succeeded")
        } catch {
            #expect(error.kind == .failed && error.message == "Operation already in progress", "\(error)")
            #expect(error.isTransient)
        }
    }

    @Test("reconnect() the moment isConnected turns false, inside the window: retried after a backoff, connected again, no failure on the stream")
    func reconnectInsideTheWindow() async throws {
        let (rig, p, events) = try await Self.disconnected(window: .milliseconds(250))
        defer { rig.stop() }
        p.reconnect()
        // The event, not isConnected: the state turns connected before `.connect` is pushed.
        try await events.events.wait(for: 3, timeout: .seconds(5))
        #expect(p.isConnected)
        #expect(events.events.items == [.connect, .forceDisconnect, .connect], "\(events.events.items)")
        #expect(events.failures.items.isEmpty, "\(events.failures.items)")
    }
}
