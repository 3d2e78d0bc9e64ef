// startNotifying / stopNotifying called in any order and at any moment: each call is answered,
// and BlueZ ends in the state of the last call.
import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Notifications turned on and off in any order")
struct NotifyStartStopTests {
    let tag = "C0:FF:EE:00:00:31"

    /// Adds the tag, connects it and discovers its services: its notifying `data` characteristic.
    func readyData(_ rig: CentralRig) async throws -> Characteristic {
        rig.simulator.add(simulatedSensorTag(tag))
        let (_, service, _) = try await rig.ready(tag)
        return try need(service.characteristic(AccelerometerUUIDs.data), "data")
    }

    /// How many centrals the simulated peripheral's notification reaches (0: notifications off in BlueZ).
    func reach(_ rig: CentralRig) -> Int {
        rig.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([0xEE]))
    }

    @Test("start then stop, neither awaited: both answered, in that order, and notifications end off",
          arguments: [false, true])
    func startThenStop(refuseAcquire: Bool) async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        if refuseAcquire {
            rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.AcquireNotify",
                                             action: .error(.bluez("NotSupported", "Operation is not supported"))))
        }
        let data = try await readyData(rig)
        let answers = Collector<String>()
        let started = data.startNotifying()
        started.onComplete(context: .immediate) { answers.append("start \(((try? $0.get()) != nil))") }
        let stopped = data.stopNotifying()
        stopped.onComplete(context: .immediate) { answers.append("stop \(((try? $0.get()) != nil))") }
        _ = try await stopped.value
        #expect(answers.items == ["start true", "stop true"])
        #expect(!data.isNotifying)
        #expect(reach(rig) == 0, "BlueZ still notifies after start; stop")
    }

    @Test("stop while AcquireNotify is still unanswered: the start is answered, then the stop; notifications end off")
    func stopDuringAcquire() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let data = try await readyData(rig)
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.AcquireNotify", action: .delay(.milliseconds(200)), count: 1))
        let answers = Collector<String>()
        data.startNotifying().onComplete(context: .immediate) { answers.append("start \(((try? $0.get()) != nil))") }
        // The queue was empty: AcquireNotify went out as startNotifying() returned, and waits 200 ms.
        let stopped = data.stopNotifying()
        stopped.onComplete(context: .immediate) { answers.append("stop \(((try? $0.get()) != nil))") }
        _ = try await stopped.value
        #expect(answers.items == ["start true", "stop true"])
        #expect(reach(rig) == 0)
    }

    @Test("stop and start again, awaited, 30 times on an acquired socket: every start succeeds on a socket, every notification arrives once")
    func stopStartCycles() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let data = try await readyData(rig)
        for cycle in 0..<30 {
            let got = Collector<Data>()
            data.receiveNotificationUpdates().onSuccess(context: .immediate) { if let d = $0.data { got.append(d) } }
            _ = try await data.startNotifying(timeout: .seconds(5)).value
            #expect(data.notificationTransport == .acquiredSocket, "cycle \(cycle)")
            #expect(rig.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([UInt8(cycle)])) == 1)
            #expect(try await got.wait(for: 1) == [Data([UInt8(cycle)])], "cycle \(cycle)")
            _ = try await data.stopNotifying(timeout: .seconds(5)).value
            #expect(reach(rig) == 0, "cycle \(cycle): still notifying after stop")
        }
    }

    @Test("AcquireNotify refused because the notifications are held: start fails with that reason, and the next start acquires again")
    func heldRefusalIsNotPermanent() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let data = try await readyData(rig)
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.AcquireNotify",
                                         action: .error(.bluez("NotPermitted", "Notify acquired")), count: 1))
        do {
            _ = try await data.startNotifying().value
            Issue.record("startNotifying succeeded while AcquireNotify was refused")
        } catch let e as PeripheralError {
            #expect(e.kind == .notPermitted, "\(e)")
        }
        #expect(!data.isNotifying)
        _ = try await data.startNotifying().value
        #expect(data.notificationTransport == .acquiredSocket)
    }

    @Test("startNotifying(via: .propertiesChanged) never calls AcquireNotify, also when it subscribes again after a reconnection")
    func startNotifyChosen() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        // An AcquireNotify that fails without a fallback: a start that called it would fail.
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.AcquireNotify",
                                         action: .error(.bluez("NotPermitted", "AcquireNotify was called"))))
        rig.simulator.add(simulatedSensorTag(tag))
        let (p, service, events) = try await rig.ready(tag, disconnectRetries: 1)
        let data = try #require(service.characteristic(AccelerometerUUIDs.data))
        await #expect(throws: (any Error).self, "the control: the default start calls AcquireNotify") {
            _ = try await data.startNotifying().value
        }
        _ = try await data.startNotifying(via: .propertiesChanged).value
        #expect(data.notificationTransport == .propertiesChanged)
        let got = Collector<UInt8>()
        data.receiveNotificationUpdates().onSuccess(context: .immediate) { got.append($0.data?.first ?? 0) }
        rig.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([1]))
        #expect(try await got.wait(for: 1) == [1])

        // The link drops and comes back: the library subscribes again, through StartNotify.
        rig.simulator.dropLink(device: "/org/bluez/hci0/dev_" + tag.replacingOccurrences(of: ":", with: "_"))
        _ = try await events.events.wait(until: { $0.contains(.disconnect) }, timeout: .seconds(5))
        p.reconnect()
        try await waitUntil("notifying again after the reconnection", timeout: .seconds(5)) { p.isConnected && data.isNotifying }
        #expect(data.notificationTransport == .propertiesChanged)
        rig.simulator.notify(peripheral: tag, characteristic: AccelerometerUUIDs.data.uuidString, value: Data([2]))
        #expect(try await got.wait(for: 2) == [1, 2])
    }
}
