// Every new value of a characteristic goes through one entry point (Characteristic.received):
// a read's reply sets `value` without being a notification; a notification sets it and
// reaches the update streams once.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Characteristic values, whatever carries them", .serialized, .timeLimit(.minutes(1)))
struct CharacteristicValueSourceTests {
    let tag = "C0:FF:EE:00:00:01"

    @Test("a read sets the value and notifies no stream; a notification sets it and reaches the stream once, also after a read")
    func readsAndNotifications() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag).service("180F") { $0.characteristic("2A19", flags: [.read, .notify], value: Data([64])) })
        let (p, _, _) = try await h.ready(tag)
        _ = try await p.discoverServices(["180F"]).value
        let battery = try #require(p.service("180F")?.characteristic("2A19"))
        let updates = Collector<[UInt8]>()
        battery.receiveNotificationUpdates().onSuccess(context: .immediate) { updates.append([UInt8]($0.data ?? Data())) }

        _ = try await battery.read().value
        #expect(battery.value == Data([64]))
        _ = try await battery.startNotifying().value
        #expect(h.simulator.notify(peripheral: tag, characteristic: "2A19", value: Data([65])) == 1)
        #expect(try await updates.wait(for: 1) == [[65]])
        #expect(battery.value == Data([65]))

        // The read's reply (and the Value change bluetoothd sends after it) is no notification.
        _ = try await battery.read().value
        #expect(battery.value == Data([65]))
        #expect(h.simulator.notify(peripheral: tag, characteristic: "2A19", value: Data([66])) == 1)
        #expect(try await updates.wait(for: 2) == [[65], [66]])
        #expect(battery.value == Data([66]))
    }
}
