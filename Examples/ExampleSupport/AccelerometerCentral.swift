// AccelerometerCentral: the central role of the examples — BlueCap's CentralManager example
// as one chain of futures: state → scan → connect → discover → enable → period → notify.

import BlueCapKit
import Foundation

/// Finds a TI SensorTag accelerometer, connects (with retries), configures it and streams
/// its samples. Reconnects after a disconnection; the chain then runs again from discovery on.
package final class AccelerometerCentral: Sendable {
    package typealias Accelerometer = TISensorTag.AccelerometerService

    /// Connection policy.
    package struct Policy: Sendable {
        var timeoutRetries = 3
        var disconnectRetries = 5
        var connectionTimeout: Duration = .seconds(10)
        var reconnectDelay: Duration = .milliseconds(500)
    }

    /// The peripheral gave up reconnecting (`ConnectionEvent.giveUp`).
    package struct GaveUp: Error, CustomStringConvertible {
        let peripheral: String
        package var description: String { "gave up connecting to \(peripheral) (retries exhausted)" }
    }

    package let manager: CentralManager
    package let console: Console
    package let periodMs: Int
    /// How notifications are turned on (`startNotifying(via:)`).
    package let transport: Characteristic.NotificationTransport
    package let policy: Policy
    private struct State {
        var peripheral: Peripheral?
        var attempt = 1
        var stopped = false
    }
    private let state = Guarded(State())

    package init(manager: CentralManager, console: Console, periodMs: Int,
                 transport: Characteristic.NotificationTransport = .acquiredSocket, policy: Policy = Policy()) {
        self.manager = manager
        self.console = console
        self.periodMs = periodMs
        self.transport = transport
        self.policy = policy
    }

    /// The peripheral in use, once found.
    package var peripheral: Peripheral? { state.withLock { $0.peripheral } }

    /// The samples, as decoded accelerometer values. Failures of one connection (a write
    /// refused, the link dropped during discovery) arrive as failed results; the stream goes on.
    package func samples() -> FutureStream<Accelerometer.Data> {
        let uuid = Accelerometer.uuid
        let period = Accelerometer.UpdatePeriod(milliseconds: periodMs)
        let policy = self.policy
        report("waiting-for-adapter", text: "waiting for \(manager.adapterName ?? "an adapter") to be powered on")
        return manager.whenStateChanges()
            .withFilter { [self] state in
                if state != .poweredOn && state != .unknown {
                    report("adapter", [("state", .string(state.description))], text: "adapter state: \(state)")
                }
                return state == .poweredOn
            }
            .flatMap { [self] _ -> FutureStream<Peripheral> in
                report("scanning", [("service", .string(uuid.uuidString))], text: "scanning for \(Accelerometer.name) \(uuid)")
                return manager.startScanning(forServiceUUIDs: [uuid]).take(1)
            }
            .flatMap { [self] peripheral -> FutureStream<ConnectionUpdate> in
                manager.stopScanning()
                state.withLock { $0.peripheral = peripheral; $0.attempt = 1 }
                report("found", [("address", .string(peripheral.address)), ("name", .optional(peripheral.name)),
                                 ("rssi", peripheral.rssi.map { .integer(Int($0)) } ?? .null)],
                       text: "found \(peripheral.name ?? "unnamed") \(peripheral.address)\(peripheral.rssi.map { " RSSI \($0) dBm" } ?? "")")
                reportConnecting(peripheral, attempt: 1)
                return peripheral.connect(timeoutRetries: policy.timeoutRetries, disconnectRetries: policy.disconnectRetries,
                                          connectionTimeout: policy.connectionTimeout)
            }
            .withFilter { [self] (peripheral, event) in
                try connectionEvent(peripheral, event)
            }
            .flatMap { [self] (peripheral, _) -> Future<Peripheral> in
                report("discovering", text: "connected; discovering services")
                return peripheral.discoverServices([uuid])
            }
            .flatMap { peripheral -> Future<Service> in
                guard let service = peripheral.service(uuid) else { throw FuturesError.noSuchElement }
                return service.discoverCharacteristics([Accelerometer.Data.uuid, Accelerometer.Enabled.uuid,
                                                        Accelerometer.UpdatePeriod.uuid])
            }
            .flatMap { [self] service -> Future<Service> in
                report("configuring", [("periodMs", .integer(period.period))],
                       text: "enabling the accelerometer, update period \(period.period) ms")
                return service.characteristic(Accelerometer.Enabled.uuid)!.write(Accelerometer.Enabled.yes).map { _ in service }
            }
            .flatMap { service -> Future<Service> in
                service.characteristic(Accelerometer.UpdatePeriod.uuid)!.write(period).map { _ in service }
            }
            .flatMap { [transport] service -> Future<Characteristic> in
                service.characteristic(Accelerometer.Data.uuid)!.startNotifying(via: transport)
            }
            .flatMap { [self] data -> FutureStream<NotificationUpdate> in
                report("streaming", text: "streaming samples")
                // Run again after each reconnection: the stream of the previous connection
                // finished when startNotifying() ran again, this one takes over.
                return data.receiveNotificationUpdates(capacity: 10)
            }
            .map { update in
                guard let bytes = update.data, let sample = SerDe.deserialize(bytes, as: Accelerometer.Data.self) else {
                    throw PeripheralError(kind: .invalidValue, operation: "Accelerometer Data", message: "bad sample \(update.data.map(hex) ?? "nil")")
                }
                return sample
            }
    }

    // MARK: Connection events

    /// `.connect` passes; `.timeout` and `.disconnect` reconnect; `.giveUp` fails.
    private func connectionEvent(_ peripheral: Peripheral, _ event: ConnectionEvent) throws -> Bool {
        switch event {
        case .connect:
            report("connected", [("address", .string(peripheral.address))], text: "connected to \(peripheral.address)")
            return true
        case .timeout:
            let attempt = state.withLock { s in s.attempt += 1; return s.attempt }
            report("timeout", text: "connection attempt timed out")
            reportConnecting(peripheral, attempt: attempt)
            peripheral.reconnect(withDelay: policy.reconnectDelay)
            return false
        case .disconnect:
            state.withLock { $0.attempt = 1 }
            report("disconnected", text: "disconnected; reconnecting")
            reportConnecting(peripheral, attempt: 1)
            peripheral.reconnect(withDelay: policy.reconnectDelay)
            return false
        case .forceDisconnect:
            return false
        case .giveUp:
            peripheral.terminate()
            throw GaveUp(peripheral: peripheral.address)
        }
    }

    /// After a failed `Connect` (not a timeout): try again, as `.timeout` would.
    package func connectFailed(_ error: any Error) {
        guard let peripheral = self.peripheral, !peripheral.isConnected else { return }
        let attempt = state.withLock { s in s.attempt += 1; return s.attempt }
        guard attempt <= policy.timeoutRetries + 1 else { return }
        reportConnecting(peripheral, attempt: attempt)
        peripheral.reconnect(withDelay: policy.reconnectDelay)
    }

    /// Stops notifications and disconnects (bounded by the futures' own timeouts).
    package func stop() async {
        let peripheral = state.withLock { s in
            s.stopped = true
            return s.peripheral
        }
        guard let peripheral else { return }
        if let data = peripheral.service(Accelerometer.uuid)?.characteristic(Accelerometer.Data.uuid) {
            _ = try? await data.stopNotifying(timeout: .seconds(2)).value
        }
        peripheral.terminate()
    }

    // MARK: Output

    private func reportConnecting(_ peripheral: Peripheral, attempt: Int) {
        let of = policy.timeoutRetries + 1
        report("connecting", [("address", .string(peripheral.address)), ("attempt", .integer(attempt)), ("of", .integer(of))],
               text: "connecting to \(peripheral.address) (attempt \(attempt)/\(of))")
    }

    private func report(_ name: String, _ fields: [(String, JSON)] = [], text: @autoclosure () -> String) {
        guard !state.withLock({ $0.stopped }) else { return }
        console.event(name, fields, text: text())
    }
}
