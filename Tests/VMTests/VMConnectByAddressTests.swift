// Real BlueZ: CentralManager.connect(address:) to a peripheral on hci1 that the central on hci0
// never scanned. The test finds out which bluetoothd it runs against by introspecting hci0 (the
// plain vm-tests step runs bluetoothd without -E, the vm-adapters step with -E) and checks the
// matching path: Adapter1.ConnectDevice and no discovery with -E; without it, a discovery that
// runs until the address is heard and is stopped before Device1.Connect.

import BlueCapKit
import DBus
import Foundation
import Testing
import TestSupport

// In RealBlueZTests (serialized with the other tests of the adapters hci0 and hci1, which a
// suite of its own would run beside); the vm-adapters step runs these by name after VMAdapterTests.
extension RealBlueZTests {
    /// Whether hci0's `Adapter1` lists `ConnectDevice` (bluetoothd --experimental).
    static func hasConnectDevice(_ bus: Connection) async throws -> Bool {
        let reply = try await bus.call(destination: "org.bluez", path: try ObjectPath("/org/bluez/\(VM.centralAdapter)"),
                                       interface: "org.freedesktop.DBus.Introspectable", member: "Introspect", timeout: VM.answerTimeout)
        guard case .string(let xml)? = reply.body.first else { throw VMTestError("no introspection data for \(VM.centralAdapter)") }
        return xml.contains("name=\"ConnectDevice\"")
    }

    /// `Adapter1.RemoveDevice` of `address` on the central's adapter, when bluetoothd has it:
    /// every scenario starts from a device bluetoothd has never seen.
    static func removeDevice(_ bus: Connection, _ address: String) async throws {
        let device = try ObjectPath(VM.devicePath(VM.centralAdapter, address))
        do {
            _ = try await bus.call(destination: "org.bluez", path: try ObjectPath("/org/bluez/\(VM.centralAdapter)"), interface: "org.bluez.Adapter1",
                                   member: "RemoveDevice", arguments: [.objectPath(device)], timeout: VM.answerTimeout)
        } catch DBusCallError.remote(let e) where e.name == "org.bluez.Error.DoesNotExist" {
            // Never seen: nothing to remove.
        }
    }

    /// Waits until bluetoothd reports no device connected (the peripheral still advertises, so
    /// not ``VM/settle(_:timeout:)``).
    static func noLinks(_ bus: Connection) async throws {
        let done = try await VM.recheck(bus, timeout: .seconds(60)) { () async throws -> Bool? in
            try await VM.snapshot(bus).connected.isEmpty ? true : nil
        }
        if done == nil { throw VMTestError("a device is still connected after 60 s: \(try await VM.snapshot(bus))") }
    }

    /// The values hci0's `Adapter1.Discovering` took, in order, while recording.
    final class DiscoveringRecorder: Sendable {
        let values = Collector<Bool>()
        let subscription: SignalSubscription

        init(_ bus: Connection) async throws {
            let values = self.values
            let path = try ObjectPath("/org/bluez/\(VM.centralAdapter)")
            subscription = bus.subscribe(rule: MatchRule(type: .signal, sender: "org.bluez", interface: "org.freedesktop.DBus.Properties",
                                                         member: "PropertiesChanged", path: path)) { m in
                if case .bool(let on)? = changedProperties(m)?["Discovering"] { values.append(on) }
            }
            try await subscription.established()
        }

        func stop() { subscription.cancel() }
    }

    @Test("a peripheral never scanned is connected by address (ConnectDevice with -E, a targeted discovery without), its services found; then again as a known device",
          .timeLimit(.minutes(4)))
    func connectByAddressNeverScanned() async throws {
        try await Pair.with { pair in
            let connectDevice = try await Self.hasConnectDevice(pair.centralBus)
            #expect(connectDevice == VM.experimental, "ConnectDevice introspected: \(connectDevice); bluetoothd args: \(VM.experimental ? "-E" : "no -E")")
            try await Self.removeDevice(pair.centralBus, pair.peripheralAddress)
            let recorder = try await DiscoveringRecorder(pair.centralBus)
            defer { recorder.stop() }
            let clock = ContinuousClock()
            let start = clock.now
            let p = try await pair.central.connect(address: pair.peripheralAddress.lowercased(), timeout: .seconds(60)).value
            let took = clock.now - start
            #expect(p.address == pair.peripheralAddress && p.isConnected)
            let service = try await pair.gatt(p)
            #expect(Set(service.characteristics.map(\.uuid)) == [Accelerometer.Data.uuid, Accelerometer.Enabled.uuid, Accelerometer.UpdatePeriod.uuid])
            let discovering = try await VM.property(pair.centralBus, try ObjectPath("/org/bluez/\(VM.centralAdapter)"), "org.bluez.Adapter1", "Discovering")
            #expect(discovering == .bool(false), "our discovery must be over")
            if connectDevice {
                #expect(!recorder.values.items.contains(true), "ConnectDevice needs no discovery: Discovering went \(recorder.values.items)")
            } else {
                #expect(recorder.values.items.first == true && recorder.values.items.last == false,
                        "a discovery ran and was stopped: Discovering went \(recorder.values.items)")
            }
            print("vm: connect(address:) by \(connectDevice ? "Adapter1.ConnectDevice" : "a targeted discovery") in \(took); Discovering went \(recorder.values.items)")

            // Disconnect, then connect again by address: bluetoothd now has the device.
            let events = Collector<ConnectionEvent>()
            p.connect().onSuccess(context: .immediate) { events.append($0.connectionEvent) }
            _ = try await events.wait(for: 1, timeout: .seconds(10))
            let resolved = await VM.servicesResolved(pair.peripheralBus, adapter: VM.peripheralAdapter, address: pair.centralAddress, timeout: .seconds(10))
            p.disconnect()
            _ = try await events.wait(for: 2, timeout: .seconds(45))
            #expect(events.items == [.connect, .forceDisconnect], "peripheral side resolved first: \(resolved)")
            try await Self.noLinks(pair.centralBus)
            let before = recorder.values.items.count
            let again = try await pair.central.connect(address: pair.peripheralAddress, timeout: .seconds(60)).value
            #expect(again === p && again.isConnected)
            #expect(recorder.values.items.count == before, "a known device is connected without discovery: \(recorder.values.items)")
            _ = await VM.servicesResolved(pair.peripheralBus, adapter: VM.peripheralAdapter, address: pair.centralAddress, timeout: .seconds(10))
            p.terminate()
            try await Self.noLinks(pair.centralBus)
            try await Self.removeDevice(pair.centralBus, pair.peripheralAddress)
        }
    }

    @Test("an address nobody advertises: .timeout naming the address, the adapter and ConnectDevice; the discovery is stopped (without -E)",
          .enabled(if: !VM.experimental), .timeLimit(.minutes(2)))
    func connectByAddressNotHeard() async throws {
        try await Pair.with(serve: false) { pair in
            let absent = "C0:FF:EE:00:00:42"
            let error = await #expect(throws: BlueCapError.self) {
                try await pair.central.connect(address: absent, timeout: .seconds(8)).value
            }
            #expect(error?.kind == .timeout)
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains(absent) && text.contains(VM.centralAdapter) && text.contains("ConnectDevice is not available"), "\(text)")
            try await VM.settle(pair.centralBus)
        }
    }
}
