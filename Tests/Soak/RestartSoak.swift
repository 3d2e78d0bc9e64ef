// RestartSoak: bluetoothd restarts on the simulator, for memory growth per restart (make soak-vm
// restarts the real one every few minutes; this runs many restarts in seconds).
import BlueCapKit
import BlueZSimulator
import Foundation
import TestSupport

extension Soak {
    /// `count` rounds of: discover → connect → discover services → subscribe → 100 notifications →
    /// bluetoothd restart (the simulator leaves the bus, a new connection takes the name, devices
    /// are forgotten) → back to `.poweredOn`. Sampled every tenth of the run.
    static func restarts(count: Int) async throws -> SoakRun {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let address = "C0:FF:EE:00:00:02"
        var run = SoakRun(name: "\(count) bluetoothd restarts, each after connect/discover/notify 100", unit: "restart")
        let clock = ContinuousClock()
        let start = clock.now
        for i in 0..<count {
            rig.simulator.add(simulatedSensorTag(address))
            let (p, service, events) = try await rig.ready(address, disconnectRetries: 1)
            let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
            let received = Collector<Int>()
            data.receiveNotificationUpdates(capacity: 128).onSuccess(context: .immediate) { _ in received.append(1) }
            _ = try await data.startNotifying().value
            _ = await rig.simulator.burst(peripheral: address, characteristic: AccelerometerUUIDs.data.uuidString, count: 100)
            try await received.wait(for: 100)
            try await rig.simulator.restart()
            try await events.events.wait(for: 2)
            try await rig.manager.whenPoweredOn(timeout: .seconds(10)).value
            p.terminate()
            if i == 0 || (i + 1) % max(1, count / 10) == 0 { run.sample(at: i + 1) }
        }
        run.elapsed = clock.now - start
        return run
    }
}
