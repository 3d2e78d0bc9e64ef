// Real BlueZ: the seed's chain (subscribe inside the reconnect chain) through two link drops that
// the peripheral's side makes (Device1.Disconnect on hci1): every notification once, in order.

import BlueCapKit
import DBus
import Foundation
import Testing
import TestSupport

// In the suite of VMTests.swift (serialized: one Pair on the VM's adapters at a time).
extension RealBlueZTests {
    @Test("the seed's chain re-subscribing after each of two link drops gets every numbered notification once, in order",
          .timeLimit(.minutes(6)))
    func seedChainNotificationsAcrossLinkDrops() async throws {
        try await Pair.with { pair in
            let dataOut = try #require(pair.service.characteristic(Accelerometer.Data.uuid))
            let p = try await pair.discover()
            let samples = Collector<Int>(), chainRuns = Collector<Int>()
            let events = Collector<ConnectionEvent>(), failures = Collector<String>()
            Self.vmSeedChain(p, pair: pair, samples: samples, chainRuns: chainRuns, events: events, failures: failures)

            var next = 0
            for round in 0...2 {
                if round > 0 {
                    // The peripheral's bluetoothd discovers the central too: dropping the link in
                    // the middle of that can stall bluetoothd 5.66 (README lesson 17).
                    _ = await VM.servicesResolved(pair.peripheralBus, adapter: VM.peripheralAdapter,
                                                  address: pair.centralAddress, timeout: .seconds(10))
                    let seen = events.items.count
                    _ = try await pair.peripheralBus.call(
                        destination: "org.bluez", path: try ObjectPath(VM.devicePath(VM.peripheralAdapter, pair.centralAddress)),
                        interface: "org.bluez.Device1", member: "Disconnect", timeout: VM.answerTimeout)
                    try await waitUntil("round \(round): .disconnect (events \(events.items))", timeout: .seconds(30)) {
                        events.items.dropFirst(seen).contains(.disconnect)
                    }
                }
                do {
                    try await chainRuns.wait(for: round + 1, timeout: .seconds(120))
                } catch {
                    Issue.record("round \(round): the chain did not subscribe again: events \(events.items), failures \(failures.items)")
                    throw error
                }
                let data = try #require(p.service(Accelerometer.uuid)?.characteristic(Accelerometer.Data.uuid))
                try await waitUntil("round \(round): notifying on both sides", timeout: .seconds(30)) {
                    data.isNotifying && dataOut.isNotifying
                }
                for _ in 0..<5 {
                    #expect(dataOut.updateValue(withData: Data([UInt8(next), 0, 64])), "notification \(next)")
                    next += 1
                }
                let last = next - 1
                try await waitUntil("round \(round): notification \(last) (have \(samples.items))", timeout: .seconds(20)) {
                    samples.items.contains(last)
                }
                print("vm: round \(round): samples \(samples.items), events \(events.items), retried: \(failures.items)")
            }
            // A last one: anything replayed or duplicated before it has arrived by now.
            let final = next
            #expect(dataOut.updateValue(withData: Data([UInt8(final), 0, 64])))
            try await waitUntil("the last notification \(final)", timeout: .seconds(20)) { samples.items.contains(final) }
            #expect(samples.items == Array(0...final))
            #expect(events.items.filter { $0 == .connect }.count == 3, "events \(events.items)")
        }
    }

    /// BlueCap's chain: connect → on `.disconnect` reconnect → discover → startNotifying →
    /// receiveNotificationUpdates, run again after each reconnection. A `.timeout` is retried after
    /// a power cycle of the central's adapter, as ``Pair/connect(_:disconnectRetries:)`` does.
    static func vmSeedChain(_ p: Peripheral, pair: Pair, samples: Collector<Int>, chainRuns: Collector<Int>,
                          events: Collector<ConnectionEvent>, failures: Collector<String>) {
        let bus = pair.centralBus
        p.connect(timeoutRetries: 2, disconnectRetries: 5, connectionTimeout: .seconds(15))
            .withFilter { (peripheral, event) in
                events.append(event)
                switch event {
                case .disconnect:
                    peripheral.reconnect(withDelay: .milliseconds(500))
                case .timeout:
                    failures.append("connection attempt timed out; power-cycling \(VM.centralAdapter), retrying")
                    Task {
                        try? await VM.setPowered(bus, VM.centralAdapter, false)
                        try? await VM.setPowered(bus, VM.centralAdapter, true)
                        peripheral.reconnect()
                    }
                default:
                    break
                }
                return event == .connect
            }
            .flatMap { (peripheral, _) in peripheral.discoverServices([Accelerometer.uuid], timeout: .seconds(30)) }
            .flatMap { peripheral -> Future<Service> in
                guard let service = peripheral.service(Accelerometer.uuid) else { throw FuturesError.noSuchElement }
                return service.discoverCharacteristics([Accelerometer.Data.uuid])
            }
            .flatMap { service -> Future<Characteristic> in
                guard let data = service.characteristic(Accelerometer.Data.uuid) else { throw FuturesError.noSuchElement }
                return data.startNotifying()
            }
            .flatMap { data -> FutureStream<NotificationUpdate> in
                defer { chainRuns.append(chainRuns.items.count + 1) }
                return data.receiveNotificationUpdates(capacity: 10)
            }
            .onComplete(context: .immediate) { result in
                switch result {
                case .success(let update): if let first = update.data?.first { samples.append(Int(first)) }
                case .failure(let error): failures.append("chain: \(error)")
                }
            }
    }
}
