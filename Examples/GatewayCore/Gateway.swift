// Gateway: BLE devices and advertisements in, MQTT out (and writes back in).

import BlueCapKit
import ExampleSupport
import Foundation

/// The running gateway: one ``MQTTClient``, one ``CentralManager``, a ``DeviceFollower`` per
/// configured device and an ``AdvertisementReporter`` for the patterns. See ``Topics`` for
/// what it publishes where.
package final class Gateway: GatewaySink {
    package let config: GatewayConfig
    package let topics: Topics
    package let manager: CentralManager
    private let console: Console
    private let client: MQTTClient
    private let followers: [String: DeviceFollower]
    private let reporter: AdvertisementReporter?
    private struct State {
        /// Retained messages republished on every connection (a restarted broker forgets them).
        var retained: [String: MQTTMessage] = [:]
        var readings = 0
        var writes = 0
        var refused = 0
        var connectedDevices = Set<String>()
        var stopped = false
    }
    private let state = Guarded(State())
    private let statsToken = CancelToken()

    /// A gateway on `session`'s `adapter` for `config`, publishing to `broker`.
    package init(config: GatewayConfig, broker: BrokerAddress, session: BluetoothSession, console: Console) throws(MQTTError) {
        self.config = config
        self.console = console
        let topics = Topics(prefix: config.prefix, gateway: config.gateway)
        self.topics = topics
        let manager = CentralManager(adapter: config.adapter, session: session)
        self.manager = manager
        if let slots = config.connectionSlots { session.connectionSlots.setBudget(slots, for: config.adapter) }
        var password: String?
        if let file = config.passwordFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw MQTTError(.refused, "cannot read the password file \(file) (check the path and that this user may read it)")
            }
            password = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let box = WeakGateway()
        var handlers = MQTTClient.Handlers()
        handlers.connected = { reconnects in box.gateway?.brokerConnected(reconnects, broker) }
        handlers.disconnected = { reason in box.gateway?.event("broker-disconnected", nil, [("reason", .string(reason))], text: reason) }
        handlers.dropping = { counts in
            box.gateway?.event("dropping", nil, [("dropped", .integer(counts.dropped)), ("queued", .integer(counts.queued))],
                               text: "the outgoing queue is full (\(counts.queued) readings): dropping the oldest until the broker takes them (\(counts.dropped) dropped so far)")
        }
        handlers.message = { topic, payload in box.gateway?.received(topic, payload) }
        client = try MQTTClient(clientID: "bluecap-\(config.gateway)", broker: broker,
                                will: MQTTMessage(topic: topics.status, text: "offline", qos: 1, retain: true),
                                queueCapacity: config.queueCapacity, username: config.username, password: password, handlers: handlers)
        var followers: [String: DeviceFollower] = [:]
        reporter = config.advertisements.isEmpty ? nil : AdvertisementReporter(patterns: config.advertisements, manager: manager) { address, payload in
            box.gateway?.client.publish(MQTTMessage(topic: topics.advertisement(address), text: payload.text, qos: 1))
        }
        for device in config.devices { followers[device.address] = DeviceFollower(device: device, manager: manager, sink: box) }
        self.followers = followers
        box.set(self)
    }

    /// Connects to the broker and starts following; returns the broker's first answer (nil when
    /// connecting started; the client retries either way).
    @discardableResult
    package func start() throws(MQTTError) -> MQTTError? {
        retain(MQTTMessage(topic: topics.status, text: "online", qos: 1, retain: true))
        client.subscribe(topics.setFilter, qos: 1)
        let first = try client.start()
        for follower in followers.values { follower.start() }
        reporter?.start { [weak self] error in
            self?.event("scan-ended", nil, [("error", .string(error))],
                        text: "the advertisement scan ended: \(error); it starts again once the adapter is powered on")
        }
        Task { [weak self] in
            while let self, !self.statsToken.isCancelled {
                try? await Task.sleep(for: .seconds(10))
                self.publishStats()
            }
        }
        return first
    }

    /// Publishes `offline`, stops following, disconnects from the broker.
    package func stop() {
        guard state.withLock({ s in defer { s.stopped = true }; return !s.stopped }) else { return }
        statsToken.cancel()
        reporter?.stop()
        for follower in followers.values { follower.stop() }
        publishStats()
        client.publish(MQTTMessage(topic: topics.status, text: "offline", qos: 1, retain: true))
        client.close()
    }

    /// The client's counts.
    package var counts: MQTTClient.Counts { client.counts }

    // MARK: GatewaySink

    package func reading(_ address: String, _ characteristic: CharacteristicConfig, _ value: Data) {
        let json = characteristic.format.json(value, uuid: characteristic.uuid, service: characteristic.service)
        let payload = JSON.object([
            ("address", .string(address)), ("characteristic", .string(characteristic.name)),
            ("uuid", .string(characteristic.uuid.uuidString)), ("value", json ?? .null), ("hex", .string(hex(value))),
            ("time", .number((Date().timeIntervalSince1970 * 1000).rounded() / 1000)),
        ])
        let announce = state.withLock { s -> Bool in
            s.readings += 1
            return config.homeAssistant && s.retained[discoveryKey(address, characteristic)] == nil
        }
        if announce, let device = config.devices.first(where: { $0.address == address }) {
            let fields = characteristic.format.fields(of: value, uuid: characteristic.uuid, service: characteristic.service)
            let messages = HomeAssistantDiscovery.messages(topics: topics, device: device, characteristic: characteristic, fields: fields)
            state.withLock { $0.retained[discoveryKey(address, characteristic)] = MQTTMessage(topic: "", payload: Data()) }
            for m in messages { retain(m) }
        }
        client.publish(MQTTMessage(topic: topics.reading(address, characteristic.name), text: payload.text, qos: 1, retain: characteristic.retain))
    }

    package func deviceState(_ address: String, connected: Bool) {
        let changed = state.withLock { s in connected ? s.connectedDevices.insert(address).inserted : s.connectedDevices.remove(address) != nil }
        guard changed else { return }
        retain(MQTTMessage(topic: topics.state(address), text: JSON.object([("connected", .bool(connected))]).text, qos: 1, retain: true))
    }

    package func event(_ name: String, _ address: String?, _ fields: [(String, JSON)], text: @autoclosure () -> String) {
        console.event(name, (address.map { [("address", JSON.string($0))] } ?? []) + fields, text: text())
    }

    // MARK: Broker

    private func brokerConnected(_ reconnects: Int, _ broker: BrokerAddress) {
        let (retained, stopped) = state.withLock { s in (Array(s.retained.values.filter { !$0.topic.isEmpty }), s.stopped) }
        guard !stopped else { return }
        event("broker-connected", nil, [("broker", .string(broker.description)), ("reconnects", .integer(reconnects))],
              text: reconnects == 0 ? "connected to the broker \(broker)" : "connected to the broker \(broker) again (reconnection \(reconnects))")
        for m in retained { client.publish(m) }
        publishStats()
    }

    private func retain(_ message: MQTTMessage) {
        state.withLock { $0.retained[message.topic] = message }
        client.publish(message)
    }

    private func discoveryKey(_ address: String, _ c: CharacteristicConfig) -> String { "\u{0}discovery/\(address)/\(c.name)" }

    private func publishStats() {
        let c = client.counts
        let (readings, writes, refused, devices) = state.withLock { ($0.readings, $0.writes, $0.refused, $0.connectedDevices.count) }
        let usage = config.adapter.map { manager.session.connectionSlots.usage(of: $0) }
        let fields: [(String, JSON)] = [
            ("readings", .integer(readings)), ("published", .integer(c.published)), ("dropped", .integer(c.dropped)),
            ("queued", .integer(c.queued)), ("reconnects", .integer(c.reconnects)), ("brokerConnected", .bool(c.connected)),
            ("writes", .integer(writes)), ("refusedWrites", .integer(refused)),
            ("devicesConnected", .integer(devices)), ("devicesConfigured", .integer(config.devices.count)),
            ("slots", usage.map { .string($0.description) } ?? .null),
        ]
        console.event("stats", fields, text: "stats: \(readings) readings, \(c.published) published, \(c.dropped) dropped, \(c.queued) queued, "
                      + "\(c.reconnects) broker reconnections, \(devices)/\(config.devices.count) devices connected")
        client.publish(MQTTMessage(topic: topics.stats, text: JSON.object(fields).text, qos: 1, retain: true))
    }

    // MARK: Writes

    /// A message on a `…/set` topic: checked, written, answered on `…/set/result`.
    private func received(_ topic: String, _ payload: Data) {
        guard let (given, name) = topics.parseSet(topic) else { return }
        let address = followers[given.uppercased()] == nil ? given : given.uppercased()
        guard let follower = followers[address.uppercased()], let characteristic = follower.device.characteristic(named: name) else {
            // Not one of ours: answered all the same, so that the sender learns why nothing happened.
            return answer(address, name, .failure(SetRefusal("no configured device \(address) with a characteristic \(name)", id: nil)))
        }
        switch SetRequest.parse(payload, for: characteristic) {
        case .failure(let refusal):
            answer(address, name, .failure(refusal))
        case .success(let request):
            Task {
                do throws(SetRefusal) {
                    let value = try await follower.write(request, to: name)
                    self.answer(address, name, .success((request, value, characteristic)))
                } catch {
                    self.answer(address, name, .failure(error))
                }
            }
        }
    }

    private func answer(_ address: String, _ name: String, _ result: Result<(SetRequest, Data?, CharacteristicConfig), SetRefusal>) {
        var fields: [(String, JSON)]
        switch result {
        case .success(let (request, value, c)):
            state.withLock { $0.writes += 1 }
            fields = [("ok", .bool(true)), ("id", .optional(request.id)), ("written", .string(hex(request.bytes)))]
            if let value { fields += [("value", c.format.json(value, uuid: c.uuid, service: c.service) ?? .null), ("hex", .string(hex(value)))] }
            event("write", address, [("characteristic", .string(name)), ("hex", .string(hex(request.bytes)))], text: "\(address) \(name): wrote \(hex(request.bytes))")
        case .failure(let refusal):
            state.withLock { $0.refused += 1 }
            fields = [("ok", .bool(false)), ("id", .optional(refusal.id)), ("error", .string(refusal.reason))]
            event("write-refused", address, [("characteristic", .string(name)), ("error", .string(refusal.reason))],
                  text: "\(address) \(name): write refused: \(refusal.reason)")
        }
        client.publish(MQTTMessage(topic: topics.result(address, name), text: JSON.object(fields).text, qos: 1))
    }
}
