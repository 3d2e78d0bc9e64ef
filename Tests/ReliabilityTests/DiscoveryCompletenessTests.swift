// Discovery without a UUID list: ServicesResolved may come before bluetoothd's InterfacesAdded
// signals of the GATT objects (its signals are sent from per-object idle callbacks, so a device
// property change queued earlier goes out first: seen on 5.82 in the VM). Discovery must give
// every service the device has, not the first one that arrived.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Reliability: discovery without UUIDs is complete", .serialized, .timeLimit(.minutes(1)))
struct DiscoveryCompletenessTests {
    @Test("ServicesResolved before the GATT objects: discoverServices() gives all of the device's services, each with its characteristics")
    func earlyResolvedGivesEveryService() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let a = addresses(1)[0]
        rig.simulator.setServicesResolvedEarly(.milliseconds(100))
        var spec = simulatedSensorTag(a, extraServiceFirst: true)
        spec = spec.service("180A") { $0.characteristic("2A29", flags: [.read], value: Data("Acme".utf8)) }
        rig.simulator.add(spec)
        let p = try await rig.discover(a)
        let events = rig.connect(p)
        try await events.events.wait(for: 1)
        _ = try await p.discoverServices(timeout: .seconds(5)).value
        #expect(Set(p.services.map(\.uuid)) == [BLEUUID("180F"), AccelerometerUUIDs.service, BLEUUID("180A")])
        let info = try #require(p.service("180A"))
        _ = try await info.discoverCharacteristics().value
        #expect(info.characteristic("2A29") != nil)
    }
}
