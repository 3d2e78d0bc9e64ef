// A peer that leaves one read unanswered, as bluetoothd meets it (BlueZSimulator's ATT timeout):
// our timeout fires first; at bluetoothd's ATT timeout the bearer closes and every GATT call is
// answered "Not connected" while Device1.Connected stays true. The first such answer ends the
// connection at once; no other failure does.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Central: the 'Not connected' window after an unanswered read", .serialized, .timeLimit(.minutes(1)))
struct NotConnectedWindowTests {
    static let address = "C0:FF:EE:00:05:01"

    @Test("the first GATT call answered 'Not connected' fails with .notConnected, the peripheral is disconnected by then, .disconnect is reported, the half-open link is taken down, and a reconnection reads")
    func notConnectedEndsTheConnection() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        rig.simulator.attTimeout = .seconds(2)
        // bluetoothd drops the link seconds after closing the bearer; here it would take a minute:
        // only our Device1.Disconnect takes it down within the test.
        rig.simulator.linkDropAfterATTTimeout = .seconds(60)
        rig.simulator.disconnectDelay = .milliseconds(300)
        rig.simulator.add(simulatedSensorTag(Self.address).leavesReadsUnanswered(of: AccelerometerUUIDs.data.uuidString))
        let (p, service, events) = try await rig.ready(Self.address, disconnectRetries: 3)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        let period = try #require(service.characteristic(AccelerometerUUIDs.period))

        // Failures that do not say the link is gone leave it: an ATT error, our own timeout. The
        // unanswered read and one queued behind it go out together (reads share the queue): the
        // peer holds the second behind the first until bluetoothd's ATT timeout, 2 s here.
        await #expect(throws: BlueCapError.self) { _ = try await period.write(data: Data(count: 513), timeout: .seconds(5)).value }
        let silent = data.read(timeout: .milliseconds(200)), queued = period.read(timeout: .seconds(10))
        do {
            _ = try await silent.value
            Issue.record("the unanswered read succeeded")
        } catch let error as BlueCapError {
            #expect(error.kind == .timeout, "\(error)")
        }
        #expect(p.isConnected)
        #expect(events.events.items == [.connect])
        // The queued read fails at the ATT timeout with the ATT Unlikely Error, as real bluetoothd
        // answers it: no link loss said yet.
        do {
            _ = try await queued.value
            Issue.record("the read queued behind the unanswered one succeeded")
        } catch let error as BlueCapError {
            #expect(error.attError == .unlikelyError, "it fails at bluetoothd's ATT timeout with 0x0e: \(error)")
        }
        #expect(p.isConnected)
        // From then on every GATT call is answered "Not connected": the first such answer ends the
        // connection before its caller sees it.
        let notConnected: BlueCapError
        do {
            _ = try await period.read(timeout: .seconds(10)).value
            Issue.record("a read after the ATT timeout succeeded")
            return
        } catch let error as BlueCapError {
            notConnected = error
        }
        #expect(notConnected.kind == .notConnected, "\(notConnected)")
        #expect(notConnected.bluez?.message == "Not connected", "\(notConnected)")
        #expect(!p.isConnected, "still connected when the operation failed")
        #expect(events.events.items == [.connect, .disconnect])

        // The documented reconnection, asked for at once: bluetoothd defers our Disconnect of the
        // half-open link (its DISCONNECT_TIMER) and would answer a Connect meanwhile as already
        // connected, for the link about to go. The Connect waits for the Disconnect's answer; the
        // link it makes is a new one, where reads work (on the old one every read fails).
        p.reconnect()
        #expect(try await events.events.wait(for: 3, timeout: .seconds(5)) == [.connect, .disconnect, .connect])
        let again = try await rig.services(of: p)
        let value = try await #require(again.characteristic(AccelerometerUUIDs.period)).read(timeout: .seconds(5)).value
        #expect(value.value == Data([100]))
        #expect(events.events.items == [.connect, .disconnect, .connect], "one drop, reported once")
    }
}
