// Both roles fail with the same error type, naming our call, the BlueZ call and the object; the
// ATT code a simulated peripheral answers reaches the central's error as the same ATTError.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Error model on the bus: both roles, one error type", .serialized, .timeLimit(.minutes(1)))
struct ErrorModelBusTests {
    @Test("a central's read refused by the firmware fails with BlueCapError naming the call, the path and the ATT code")
    func centralReadError() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        let tag = "00:AA:01:00:00:31"
        h.simulator.add(simulatedSensorTag(tag).firmware(PeripheralFirmware(onRead: { request in
            request.characteristic.lowercased().hasPrefix("f000aa13") ? .failure(.unlikelyError) : nil
        })))
        let (_, service, _) = try await h.ready(tag)
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let error = try #require(try await errorOf(period.read(timeout: .seconds(5))) as? BlueCapError)
        #expect(error.kind == .failed, "\(error)")
        #expect(error.attError == .unlikelyError, "\(error)")
        #expect(error.operation.contains("org.bluez.GattCharacteristic1.ReadValue"), "\(error)")
        #expect(error.path == period.objectPath, "\(error)")
    }

    @Test("the peripheral manager fails with BlueCapError naming PeripheralManager.add and the GattManager1 call")
    func peripheralAddError() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        let service = MutableService(profile: Accelerometer.profile)
        try await h.peripheralManager.add(service).value
        let twice = try #require(try await errorOf(h.peripheralManager.add(service)) as? BlueCapError)
        #expect(twice.kind == .alreadyExists)
        #expect(twice.operation == "PeripheralManager.add (org.bluez.GattManager1.RegisterApplication)")
        #expect(twice.path == h.peripheralManager.applicationPath)

        // BlueZ refusing the registration: its error, our operation, the adapter's path.
        h.simulator.inject(MethodFault("org.bluez.GattManager1.RegisterApplication",
                                       action: .error(.bluez("AlreadyExists", "Already Exists"))))
        let other = MutableService(uuid: "180F", characteristics: [
            MutableCharacteristic(uuid: "2A19", properties: [.read], permissions: [.readable], value: Data([90]))])
        let refused = try #require(try await errorOf(h.peripheralManager.add(other)) as? BlueCapError)
        #expect(refused.kind == .alreadyExists, "\(refused)")
        #expect(refused.bluez?.kind == .alreadyExists, "\(refused)")
        #expect(refused.operation == "PeripheralManager.add (org.bluez.GattManager1.RegisterApplication)", "\(refused)")
        #expect(refused.path == h.peripheralManager.adapterPath, "\(refused)")
        #expect(h.peripheralManager.services.count == 1, "the refused service is not kept")
    }

    @Test("stopAdvertising and removeAllServices need no `_ =`; their errors are BlueCapError too")
    func discardableResults() async throws {
        let h = try await PeripheralRig.start(recording: true)
        defer { Task { await h.stop() } }
        h.peripheralManager.removeAllServices()
        h.peripheralManager.stopAdvertising()
        let missing = MutableService(uuid: "180F")
        let error = try #require(try await errorOf(h.peripheralManager.remove(missing)) as? BlueCapError)
        #expect(error.kind == .doesNotExist)
        #expect(error.operation == "PeripheralManager.remove (org.bluez.GattManager1.UnregisterApplication)")
    }
}

/// The error `future` failed with (nil when it succeeded), within `timeout`.
private func errorOf<T: Sendable>(_ future: Future<T>, within timeout: Duration = .seconds(10)) async throws -> (any Error)? {
    try await withDeadline(timeout, "future") { () async -> (any Error)? in
        do { _ = try await future.value; return nil } catch { return error }
    }
}
