// The error kinds the documentation promises when the way to bluetoothd goes away mid-call:
// our own connection closed, bluetoothd leaving the bus, and the state right after a restart.
import BlueCapKit
import BlueZ
import BlueZSimulator
import DBus
import Dispatch
import Foundation
import Futures
import Testing
import TestSupport
import Locking

@Suite("Reliability: error kinds when the bus or bluetoothd goes away", .serialized, .timeLimit(.minutes(1)))
struct ErrorKindTests {
    @Test("bluetoothd leaving the bus with a call pending: BlueZError serviceUnavailable at once, not timeout")
    func bluetoothdLeavesMidCall() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        // A bluetoothd that takes ReadValue and never answers, then leaves the bus: the only
        // answer the caller gets is the bus daemon's NoReply "recipient disconnected".
        let fake = try await FakeBlueZ(bus: bus, objects: [FakeBlueZ.managed([])])
        let parked = Locked<[Responder]>([])
        try fake.add([DBusInterface(name: "org.bluez.GattCharacteristic1", methods: [
            DBusMethod("ReadValue", input: "a{sv}", output: "ay", handler: { _, r in parked.withLock { $0.append(r) } }),
        ])], at: HostileBusTests.char)
        let answer = Collector<Result<Data, BlueZError>>()
        GattCharacteristic1(connection: try bus.connect(), path: HostileBusTests.char)
            .readValue(timeout: .seconds(30)) { answer.append($0) }
        try await waitUntil("ReadValue parked") { parked.withLock { !$0.isEmpty } }
        fake.connection.close()
        let result = try await answer.wait(for: 1, timeout: promptly)[0]
        parked.withLock { $0.removeAll() }
        guard case .failure(let error) = result else { Issue.record("ReadValue succeeded"); return }
        #expect(error.kind == .serviceUnavailable, "\(error)")
    }

    @Test("our own connection closed with calls pending: PeripheralError.disconnected, before and after the close")
    func ownConnectionClosed() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (_, _, service, _) = try await rig.readyTag()
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.WriteValue", action: .noReply))
        let pending: [Future<Characteristic>] = [period.read(timeout: .seconds(30)), period.write(data: Data([5]), timeout: .seconds(30))]
        rig.client.close()
        for f in pending + [data.read(timeout: .seconds(30))] {
            let e = try #require(try await failure(of: f, within: promptly) as? PeripheralError)
            #expect(e.kind == .disconnected, "\(e)")
            #expect(e.bluez?.kind == .disconnected, "\(e)")
        }
    }

    @Test("whenPoweredOn() right after a bluetoothd restart waits for the new bluetoothd, not the state from before")
    func whenPoweredOnAfterRestart() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let states = Collector<ManagerState>()
        rig.manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        try await states.wait(for: 1)
        // Keep the client's owner thread busy through the restart, so that its NameOwnerChanged
        // signals are still unread when whenPoweredOn() is called: the cached state is stale.
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        rig.client.execute { gate.wait() }
        try await rig.simulator.restart()
        #expect(rig.manager.state == .poweredOn)
        let poweredOn = rig.manager.whenPoweredOn(timeout: .seconds(10))
        #expect(!poweredOn.isCompleted, "answered from the state before the restart")
        gate.signal()
        try await withDeadline(promptly, "powered on again") { try await poweredOn.value }
        // By then the restart had been seen, and the new bluetoothd's adapter is on.
        #expect(states.items.contains(.resetting), "\(states.items)")
        #expect(rig.manager.state == .poweredOn)
        let a = addresses(1)[0]
        rig.simulator.add(simulatedSensorTag(a))
        _ = try await rig.discover(a)
    }
}
