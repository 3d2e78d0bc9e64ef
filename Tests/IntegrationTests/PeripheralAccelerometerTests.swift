// The seed's accelerometer flow: PeripheralManager on hci1 serves the TI accelerometer service
// and advertises; a raw D-Bus central on hci0 discovers, connects, reads, writes, subscribes.

import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

typealias Accelerometer = TISensorTag.AccelerometerService

@Suite("Peripheral role: accelerometer over the virtual radio", .serialized)
struct PeripheralAccelerometerTests {
    /// Adds the accelerometer service and advertises it; returns the service.
    static func serve(_ h: PeripheralRig, name: String = "SensorTag") async throws -> MutableService {
        let service = MutableService(profile: Accelerometer.profile)
        try await withDeadline(.seconds(10), "add + advertise") {
            try await h.peripheralManager.add(service).value
            try await h.peripheralManager.startAdvertising(name, uuids: [Accelerometer.uuid]).value
        }
        return service
    }

    @Test("a central discovers the advertised service by UUID, connects and reads the initial values")
    func discoverConnectRead() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        _ = try await Self.serve(h)
        #expect(h.peripheralManager.isAdvertising)
        let props = try await h.discoverPeripheral()
        #expect(props["Name"] == .string("SensorTag"))
        guard case .array(_, let uuids)? = props["UUIDs"] else { Issue.record("no UUIDs in \(props)"); return }
        #expect(uuids.contains(.string(Accelerometer.uuid.uuidString)))
        try await h.connectPeripheral()
        #expect(try await h.read(try await h.characteristicPath(Accelerometer.Data.uuid)) == [0, 0, 64])
        #expect(try await h.read(try await h.characteristicPath(Accelerometer.Enabled.uuid)) == [0])
        #expect(try await h.read(try await h.characteristicPath(Accelerometer.UpdatePeriod.uuid)) == [100])
        // Offset reads: the value from the offset on; beyond the value: InvalidOffset → ATT 0x07.
        #expect(try await h.read(try await h.characteristicPath(Accelerometer.Data.uuid), offset: 2) == [64])
        let beyond = await h.error(try await h.characteristicPath(Accelerometer.Data.uuid), "org.bluez.GattCharacteristic1",
                                   "ReadValue", [.properties(["offset": .uint16(4)])])
        #expect(beyond?.name == "org.bluez.Error.InvalidArguments")
        #expect(beyond?.message == "Invalid offset")
    }

    @Test("writes to Enabled and UpdatePeriod reach the request stream, wait for the app's answer and are stored")
    func writesThroughRequestStream() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        let service = try await Self.serve(h)
        let enabled = try #require(service.characteristic(Accelerometer.Enabled.uuid))
        let period = try #require(service.characteristic(Accelerometer.UpdatePeriod.uuid))
        let enabledRequests = collect(enabled.startRespondingToWriteRequests())
        let periodRequests = collect(period.startRespondingToWriteRequests())
        _ = try await h.discoverPeripheral()
        try await h.connectPeripheral()
        let enabledPath = try await h.characteristicPath(Accelerometer.Enabled.uuid)
        let periodPath = try await h.characteristicPath(Accelerometer.UpdatePeriod.uuid)

        // The central's write stays pending until the app answers.
        let write = Task { await h.write(enabledPath, [1]) }
        let first = try await enabledRequests.wait(for: 1)[0]
        #expect(first.request.kind == .write)
        #expect(first.request.value == Data([1]))
        #expect(first.request.offset == 0)
        #expect(first.request.writeType == .request)
        #expect(first.central.address == h.simulator.adapterAddress(0))
        #expect(first.request.link == "LE")
        #expect(enabled.value == Data([0]), "stored only after the answer")
        #expect(enabled.respondToRequest(first.request, withResult: .success))
        #expect(await write.value == nil)
        #expect(enabled.value == Data([1]))
        #expect(try await h.read(enabledPath) == [1])
        #expect(!enabled.respondToRequest(first.request, withResult: .success), "a second answer is ignored")

        let periodWrite = Task { await h.write(periodPath, [50]) }
        let p = try await periodRequests.wait(for: 1)[0]
        #expect(p.request.value == Data([50]))
        period.respondToRequest(p.request, withResult: .success)
        #expect(await periodWrite.value == nil)
        #expect(try await h.read(periodPath) == [50])

        // Rejections reach the central as bluetoothd maps them.
        let rejected = Task { await h.write(periodPath, [0]) }
        let r = try await periodRequests.wait(for: 2)[1]
        period.respondToRequest(r.request, withResult: .failure(.writeNotPermitted))
        let e1 = await rejected.value
        #expect(e1?.name == "org.bluez.Error.NotPermitted")
        let appError = Task { await h.write(periodPath, [0]) }
        let r2 = try await periodRequests.wait(for: 3)[2]
        period.respondToRequest(r2.request, withResult: .failure(.application(0x81)))
        let e2 = await appError.value
        #expect(e2?.name == "org.bluez.Error.Failed")
        #expect(e2?.message.contains("0x81") == true)
        #expect(try await h.read(periodPath) == [50], "rejected writes change nothing")

        // Reads answered by the app.
        let reads = collect(period.startRespondingToReadRequests())
        let read = Task { try await h.read(periodPath) }
        let rr = try await reads.wait(for: 1)[0]
        #expect(rr.request.kind == .read)
        period.respondToRequest(rr.request, withValue: Data([7, 8]))
        #expect(try await read.value == [7, 8])
    }

    @Test("a central subscribes, receives each updateValue as a notification, and unsubscribes")
    func notifications() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        let service = try await Self.serve(h)
        let data = try #require(service.characteristic(Accelerometer.Data.uuid))
        let events = collect(data.whenSubscriptionChanges())
        #expect(!data.updateValue(withData: Data([1, 2, 3])), "nobody subscribed")
        _ = try await h.discoverPeripheral()
        try await h.connectPeripheral()
        let path = try await h.characteristicPath(Accelerometer.Data.uuid)
        try await h.call(path, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(try await events.wait(for: 1) == [.subscribed])
        #expect(data.isNotifying)
        let from = h.signals.items.count
        let sample = Accelerometer.Data(xRaw: -64, yRaw: 32, zRaw: 64)
        #expect(data.updateValue(sample))
        try await h.waitSignal("notification 1", after: from) { isChanged($0, path, "Value", bytesValue([0xC0, 0x20, 0x40])) }
        #expect(data.updateValue(withData: Data([5, 6, 7])))
        try await h.waitSignal("notification 2", after: from) { isChanged($0, path, "Value", bytesValue([5, 6, 7])) }
        try await h.call(path, "org.bluez.GattCharacteristic1", "StopNotify")
        #expect(try await events.wait(for: 2) == [.subscribed, .unsubscribed])
        #expect(!data.updateValue(withData: Data([9, 9, 9])))
        #expect(try await h.read(path) == [9, 9, 9], "the value is stored even when nobody is notified")
    }
}
