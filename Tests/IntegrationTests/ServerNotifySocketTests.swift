// The peripheral role's notification socket: bluetoothd (here the simulator) acquires it when a
// central subscribes, values leave through it, and it closes when the last central unsubscribes.
import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Server notification socket (AcquireNotify on our characteristics)", .serialized, .timeLimit(.minutes(1)))
struct ServerNotifySocketTests {
    typealias World = NotificationOrderTests.World

    /// Waits until `local.isNotifying` is `on`, following its subscription events.
    func waitNotifying(_ local: MutableCharacteristic, _ on: Bool) async throws {
        let events = Collector<SubscriptionEvent>()
        local.whenSubscriptionChanges().onSuccess(context: .immediate) { events.append($0) }
        while local.isNotifying != on {
            try await events.wait(for: events.items.count + 1, timeout: .seconds(10))
        }
    }

    @Test("a subscription acquires the socket; values arrive through it in order; unsubscribing closes it; a new subscription acquires another",
          arguments: [NotificationOrderTests.socketUUID, NotificationOrderTests.signalUUID])
    func socketFollowsSubscriptions(uuid: BLEUUID) async throws {
        let world = try await World()
        defer { Task { await world.stop() } }
        let local = try need(world.service.characteristic(uuid), "local characteristic")
        let remote = try need(world.remote.characteristic(uuid), "remote characteristic")
        #expect(!local.isNotifyAcquired && !local.isNotifying)

        for round in 1...2 {
            let got = Collector<UInt8>()
            remote.receiveNotificationUpdates().onSuccess(context: .immediate) { update in
                if let byte = update.data?.first { got.append(byte) }
            }
            _ = try await within(remote.startNotifying(), "startNotifying (round \(round))")
            try await waitNotifying(local, true)
            #expect(local.isNotifyAcquired, "round \(round): notifications should go through the acquired socket")
            for n in UInt8(1)...10 { #expect(local.updateValue(withData: Data([n]))) }
            #expect(try await got.wait(for: 10, timeout: .seconds(10)) == Array(1...10))
            #expect(local.droppedNotificationCount == 0)

            _ = try await within(remote.stopNotifying(), "stopNotifying (round \(round))")
            try await waitNotifying(local, false)
            #expect(!local.isNotifyAcquired, "round \(round): the socket should close with the last subscription")
            #expect(!local.updateValue(withData: Data([99])), "nobody subscribed: nothing is sent")
        }
    }

    @Test("a characteristic that does not offer the socket notifies through PropertiesChanged")
    func optOutUsesPropertiesChanged() async throws {
        let uuid: BLEUUID = "0000FEE5-0000-1000-8000-00805F9B34FB"
        let characteristic = MutableCharacteristic(uuid: uuid, properties: [.read, .notify], permissions: [.readable], value: Data([0]))
        characteristic.offersNotifySocket = false
        let service = MutableService(uuid: NotificationOrderTests.serviceUUID, characteristics: [characteristic])
        let rig = try await PeripheralRig.start(serving: service, advertisingAs: "NoSocket")
        defer { Task { await rig.stop() } }
        let remote = try need(try await rig.connectService().characteristic(uuid), "remote characteristic")
        let got = Collector<UInt8>()
        remote.receiveNotificationUpdates().onSuccess(context: .immediate) { if let b = $0.data?.first { got.append(b) } }
        _ = try await within(remote.startNotifying(), "startNotifying")
        try await waitNotifying(characteristic, true)
        #expect(!characteristic.isNotifyAcquired)
        for n in UInt8(1)...5 { #expect(characteristic.updateValue(withData: Data([n]))) }
        #expect(try await got.wait(for: 5, timeout: .seconds(10)) == Array(1...5))
    }

    @Test("with acceptsWriteSocket, writes without response arrive through the socket bluetoothd acquired, in order, as requests from the central")
    func writesThroughSocket() async throws {
        let uuid: BLEUUID = "0000FEE6-0000-1000-8000-00805F9B34FB"
        let characteristic = MutableCharacteristic(uuid: uuid, properties: [.writeWithoutResponse], permissions: [.writeable], value: Data())
        characteristic.acceptsWriteSocket = true
        let service = MutableService(uuid: NotificationOrderTests.serviceUUID, characteristics: [characteristic])
        let rig = try await PeripheralRig.start(serving: service, advertisingAs: "WriteSocket")
        defer { Task { await rig.stop() } }
        let requests = Collector<(UInt8, String?)>()
        characteristic.startRespondingToWriteRequests(capacity: 100).onSuccess(context: .immediate) { request, central in
            characteristic.respondToRequest(request, withResult: .success)  // stores the value (bluetoothd acknowledged already)
            requests.append((request.value?.first ?? 0, central.address))
        }
        let remote = try need(try await rig.connectService().characteristic(uuid), "remote characteristic")
        #expect(!characteristic.isWriteAcquired)
        for n in UInt8(1)...20 { _ = try await within(remote.write(data: Data([n]), type: .withoutResponse), "write \(n)") }
        let got = try await requests.wait(for: 20, timeout: .seconds(10))
        #expect(got.map(\.0) == Array(1...20))
        let centrals = Set(got.map(\.1))
        #expect(centrals.count == 1 && centrals.first! != nil, "every write attributed to the one central: \(centrals)")
        #expect(characteristic.isWriteAcquired)
        #expect(characteristic.value == Data([20]))
    }
}
