// A scan stops when nobody consumes it any more, and a scan timeout says so.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Scan abandonment", .serialized, .timeLimit(.minutes(1)))
struct ScanAbandonmentTests {
    /// Collects the adapter's `Discovering` changes, as the simulator publishes them.
    private func watchDiscovering(_ rig: CentralRig) async throws -> (Collector<Bool>, SignalSubscription) {
        let changes = Collector<Bool>()
        let subscription = rig.client.subscribe(rule: MatchRule(
            interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: ObjectPath("/org/bluez/hci0"))) { m in
            if let value = changedProperties(m)?["Discovering"], case .bool(let on) = value { changes.append(on) }
        }
        try await subscription.established()
        return (changes, subscription)
    }

    @Test("startScanning().first().timeout(after:) with no matching device stops the scan when the timeout fires")
    func firstTimeoutStopsScan() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let (discovering, subscription) = try await watchDiscovering(rig)
        defer { subscription.cancel() }
        // The futures chain's timer on the manager's clock.
        let context = ManualContext(clock: try #require(rig.clock))
        let found = rig.manager.startScanning(forServiceUUIDs: [AccelerometerUUIDs.service]).first()
            .timeout(after: 0.3, context: context)
        try await discovering.wait(for: 1)
        #expect(rig.manager.isScanning)
        context.advance(by: .milliseconds(299))
        #expect(rig.manager.isScanning && !found.isCompleted)
        context.advance(by: .milliseconds(1))
        await #expect(throws: FuturesError.timeout(after: .milliseconds(300))) { try await found.value }
        // Released before the timeout was reported.
        #expect(!rig.manager.isScanning)
        #expect(try await discovering.wait(for: 2) == [true, false])
        #expect(rig.simulator.sync { $0.discoveryClients(adapter: 0) }.isEmpty)
    }

    @Test("a scan whose only consumer cancels its subscription stops; another consumer keeps it running")
    func cancelledConsumerStopsScan() async throws {
        let rig = try await CentralRig.start()
        defer { rig.stop() }
        let (discovering, subscription) = try await watchDiscovering(rig)
        defer { subscription.cancel() }
        let scan = rig.manager.startScanning()
        let first = CancelToken(), second = CancelToken()
        scan.onSuccess(context: .immediate, cancelToken: first) { _ in }
        scan.onSuccess(context: .immediate, cancelToken: second) { _ in }
        try await discovering.wait(for: 1)
        first.cancel()
        #expect(rig.manager.isScanning)
        second.cancel()
        #expect(!rig.manager.isScanning)
        #expect(try await discovering.wait(for: 2) == [true, false])
    }

    @Test("startScanning(timeout:) ends its stream with an error naming the timeout")
    func scanTimeoutError() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let stream = rig.manager.startScanning(timeout: .milliseconds(200))
        let first = stream.first()
        await rig.advance(by: .milliseconds(199))
        #expect(!first.isCompleted && rig.manager.isScanning)
        rig.clock?.advance(by: .milliseconds(1))
        let error = await #expect(throws: CentralManagerError.self) { try await first.value }
        #expect(error == .scanTimedOut(after: .milliseconds(200)))
        #expect("\(error.map { "\($0)" } ?? "")".contains("timed out after 0.2 s"))
        #expect(!rig.manager.isScanning)
    }
}
