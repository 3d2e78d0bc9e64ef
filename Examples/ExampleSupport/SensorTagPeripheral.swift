// SensorTagPeripheral: the peripheral role of the examples — a TI SensorTag accelerometer
// served with PeripheralManager, with synthetic motion.

import BlueCapKit
import Dispatch
import Foundation

/// Serves the TI accelerometer service (DESIGN §6) on a ``PeripheralManager``: Data (read +
/// notify), Enabled (read + write, initial 0), UpdatePeriod (read + write, initial raw 100,
/// period ms = max(10, 10 × raw)). While Enabled is 1, Data is updated every period with a slow
/// rotation of the gravity vector (each sample turns 0.1 rad, so x, y, z change smoothly and
/// two consecutive samples always differ) and notified to subscribed centrals.
///
/// `@unchecked Sendable`: the mutable fields (`enabled`, `periodMs`, `step`, counters, `timer`)
/// are only touched on `queue`.
package final class SensorTagPeripheral: @unchecked Sendable {
    package typealias Accelerometer = TISensorTag.AccelerometerService

    package let manager: PeripheralManager
    package let console: Console
    package let name: String
    package let service: MutableService
    private let queue = DispatchQueue(label: "sensortag.peripheral")
    private var enabled = false
    private var periodMs = Accelerometer.UpdatePeriod(rawValue: 100).period
    private var step = 0
    private var sentInWindow = 0
    private var deliveredInWindow = 0
    private var timer: (any DispatchSourceTimer)?
    private var rateTimer: (any DispatchSourceTimer)?

    /// With `secure`, reading Data needs an encrypted link (`encrypt-read`): an unpaired central
    /// must pair first.
    package init(manager: PeripheralManager, name: String, console: Console, secure: Bool = false) {
        self.manager = manager
        self.name = name
        self.console = console
        let profile = TISensorTag.AccelerometerService.profile
        guard secure else {
            service = MutableService(profile: profile)
            return
        }
        service = MutableService(uuid: Accelerometer.uuid, name: Accelerometer.name, characteristics: profile.characteristics.map { c in
            guard c.uuid == Accelerometer.Data.uuid else { return MutableCharacteristic(profile: c) }
            return MutableCharacteristic(uuid: c.uuid, properties: c.properties, permissions: c.permissions.union(.readEncryptionRequired),
                                         value: c.initialValue, name: c.name)
        })
    }

    private var data: MutableCharacteristic { service.characteristic(Accelerometer.Data.uuid)! }
    private var enabledCharacteristic: MutableCharacteristic { service.characteristic(Accelerometer.Enabled.uuid)! }
    private var periodCharacteristic: MutableCharacteristic { service.characteristic(Accelerometer.UpdatePeriod.uuid)! }

    // MARK: Starting

    /// Waits for a powered adapter, adds the service, starts advertising `name` with the
    /// service UUID, and starts answering writes. Completes once advertising.
    package func start(timeout: Duration = .seconds(10)) -> Future<Void> {
        answerWrites()
        data.whenSubscriptionChanges().onSuccess { [self] event in
            say(event == .subscribed ? "subscribed" : "unsubscribed", [("characteristic", .string("Data"))],
                          text: event == .subscribed ? "a central subscribed to Data" : "a central unsubscribed from Data")
        }
        manager.whenAdvertisingChanges().onSuccess { [self] on in
            say("advertising", [("advertising", .bool(on)), ("name", .string(name))],
                          text: on ? "advertising \"\(name)\" with \(Accelerometer.uuid)" : "advertising stopped")
        }
        return poweredOn(timeout: timeout)
            .flatMap { [self] _ in manager.add(service) }
            .flatMap { [self] _ in
                say("service-added", [("uuid", .string(Accelerometer.uuid.uuidString))],
                              text: "added \(Accelerometer.name) service \(Accelerometer.uuid)")
                return manager.startAdvertising(advertisement)
            }
            .flatMap { [self] _ in manager.advertisingCapabilities() }
            .map { [self] capabilities in describe(advertisement, capabilities) }
    }

    /// What is advertised: the `name` and the service UUID, connectable, discoverable, with the
    /// TX power (as ``PeripheralManager/startAdvertising(_:uuids:)`` does).
    package var advertisement: LocalAdvertisement {
        LocalAdvertisement(type: .peripheral, serviceUUIDs: [Accelerometer.uuid.uuidString], localName: name)
    }

    /// One `advertisement` event (stderr, or a JSON line with --json): every property sent to
    /// bluetoothd, the bytes it takes in the advertising data and scan response against the
    /// adapter's limits, and the instances in use.
    private func describe(_ ad: LocalAdvertisement, _ caps: AdvertisingCapabilities) {
        let fields: [(String, JSON)] = [
            ("type", .string(ad.type.rawValue)), ("localName", JSON.optional(ad.localName)),
            ("serviceUUIDs", .array(ad.serviceUUIDs.map(JSON.string))), ("includes", .array(ad.includes.map(JSON.string))),
            ("discoverable", ad.discoverable.map(JSON.bool) ?? .null),
            ("advertisingDataBytes", .integer(ad.advertisingDataLength)), ("advertisingDataLimit", .integer(caps.advertisingDataLimit)),
            ("scanResponseBytes", .integer(ad.scanResponseLength)), ("scanResponseLimit", .integer(caps.scanResponseLimit)),
            ("activeInstances", caps.activeInstances.map(JSON.integer) ?? .null),
            ("freeInstances", caps.availableInstances.map(JSON.integer) ?? .null),
        ]
        console.event("advertisement", fields, text: "advertisement: \(ad.type.rawValue) \"\(ad.localName ?? "")\" uuids \(ad.serviceUUIDs) "
                      + "includes \(ad.includes), data \(ad.advertisingDataLength)/\(caps.advertisingDataLimit) B, "
                      + "scan response \(ad.scanResponseLength)/\(caps.scanResponseLimit) B; adapter: \(caps)")
    }

    /// The first `.poweredOn` of the manager, or a failure naming the state after `timeout`.
    private func poweredOn(timeout: Duration) -> Future<Void> {
        let promise = Promise<Void>()
        let token = CancelToken()
        manager.whenStateChanges().onSuccess(context: .immediate, cancelToken: token) { state in
            if state == .poweredOn, promise.success(()) { token.cancel() }
        }
        let manager = self.manager
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout.components.seconds * 1000))) {
            if promise.failure(ExampleFailure.adapter(manager.state, adapter: manager.adapterName)) { token.cancel() }
        }
        return promise.future
    }

    // MARK: Writes

    private func answerWrites() {
        let enabledCharacteristic = self.enabledCharacteristic
        enabledCharacteristic.startRespondingToWriteRequests().onSuccess { [self] (request, central) in
            guard let value = request.value, value.count == 1 else {
                enabledCharacteristic.respondToRequest(request, withResult: .failure(.invalidAttributeValueLength))
                return
            }
            guard let setting = Accelerometer.Enabled(rawValue: value[0]) else {
                enabledCharacteristic.respondToRequest(request, withResult: .failure(.application(0x80)))
                say("write-rejected", [("characteristic", .string("Enabled")), ("value", .string(hex(value)))],
                              text: "rejected Enabled = \(hex(value)) from \(central): not 0 or 1")
                return
            }
            enabledCharacteristic.respondToRequest(request, withResult: .success)
            say("write", [("characteristic", .string("Enabled")), ("value", .integer(Int(value[0]))),
                                    ("central", .string(central.description))],
                          text: "\(central) wrote Enabled = \(setting == .yes ? "yes" : "no")")
            queue.async { self.setEnabled(setting == .yes) }
        }
        let periodCharacteristic = self.periodCharacteristic
        periodCharacteristic.startRespondingToWriteRequests().onSuccess { [self] (request, central) in
            guard let value = request.value, value.count == 1 else {
                periodCharacteristic.respondToRequest(request, withResult: .failure(.invalidAttributeValueLength))
                return
            }
            periodCharacteristic.respondToRequest(request, withResult: .success)
            let period = Accelerometer.UpdatePeriod(rawValue: value[0]).period
            say("write", [("characteristic", .string("UpdatePeriod")), ("value", .integer(Int(value[0]))),
                                    ("periodMs", .integer(period)), ("central", .string(central.description))],
                          text: "\(central) wrote UpdatePeriod = \(value[0]) (\(period) ms)")
            queue.async { self.setPeriod(period) }
        }
    }

    // MARK: Sampling (on `queue`)

    private func setEnabled(_ on: Bool) {
        enabled = on
        reschedule()
    }

    private func setPeriod(_ ms: Int) {
        periodMs = ms
        reschedule()
    }

    private func reschedule() {
        timer?.cancel()
        timer = nil
        rateTimer?.cancel()
        rateTimer = nil
        guard enabled else { return }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + .milliseconds(periodMs), repeating: .milliseconds(periodMs), leeway: .milliseconds(1))
        t.setEventHandler { [weak self] in self?.tick() }
        t.resume()
        timer = t
        let r = DispatchSource.makeTimerSource(queue: queue)
        r.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        r.setEventHandler { [weak self] in self?.reportRate() }
        r.resume()
        rateTimer = r
        sentInWindow = 0
        deliveredInWindow = 0
    }

    /// One sample: the gravity vector turned by 0.1 rad per step, with a slower wobble on y.
    package static func motion(step: Int) -> Accelerometer.Data {
        let angle = Double(step) * 0.1
        return Accelerometer.Data(x: sin(angle), y: 0.3 * sin(angle / 3), z: cos(angle))
    }

    private func tick() {
        guard enabled else { return }
        step += 1
        let sample = Self.motion(step: step)
        let delivered = data.updateValue(sample)
        sentInWindow += 1
        if delivered { deliveredInWindow += 1 }
        if console.json {
            say("sent", [("seq", .integer(step)), ("x", .number(sample.x)), ("y", .number(sample.y)),
                                   ("z", .number(sample.z)), ("delivered", .bool(delivered))], text: "")
        }
    }

    private func reportRate() {
        let (sent, delivered) = (sentInWindow, deliveredInWindow)
        sentInWindow = 0
        deliveredInWindow = 0
        let sample = Self.motion(step: step)
        say("rate", [("samplesPerSecond", .integer(sent)), ("notified", .integer(delivered)), ("periodMs", .integer(periodMs))],
                      text: "notifying \(delivered)/s (period \(periodMs) ms), last x \(grams(sample.x)) y \(grams(sample.y)) z \(grams(sample.z)) g")
    }

    /// An event of the peripheral: its main output (stdout in text mode too).
    private func say(_ name: String, _ fields: [(String, JSON)] = [], text: @autoclosure () -> String) {
        console.event(name, fields, text: text(), result: true)
    }

    // MARK: Stopping

    /// Stops sampling, advertising and the service (unregistered from bluetoothd).
    package func shutdown() async {
        queue.sync {
            enabled = false
            reschedule()
        }
        _ = try? await manager.shutdown().value
    }
}

/// Why an example could not run, with the text printed and the exit code.
package enum ExampleFailure: Error, CustomStringConvertible {
    /// The adapter never became usable.
    case adapter(ManagerState, adapter: String?)

    package var description: String {
        switch self {
        case .adapter(let state, let adapter):
            let which = adapter ?? "the adapter"
            switch state {
            case .poweredOff: return "\(which) is powered off — try: bluetoothctl power on"
            case .unauthorized: return "the D-Bus policy does not let this user talk to org.bluez — add the user to the bluetooth group (see README, Running on real hardware)"
            case .unsupported: return adapter.map { "no adapter \($0) — list adapters with: bluetoothctl list" } ?? "no Bluetooth adapter found — list adapters with: bluetoothctl list"
            default: return "\(which) is not ready (state \(state))"
            }
        }
    }
}
