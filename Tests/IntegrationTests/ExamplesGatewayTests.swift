// ble-gateway as a process against a real mosquitto on a loopback port: what a subscriber
// receives, `/set` writes and their results, a broker killed and restarted, a broker that is
// not there yet, and configuration errors.
import Foundation
import GatewayCore
import Glibc
import Testing
import TestSupport

@Suite("Examples: ble-gateway against mosquitto", .serialized)
struct ExamplesGatewayTests {
    static let tag = "00:B1:0E:5C:00:01"

    /// `ble-gateway --simulate --json --broker <broker> --gateway <name>` plus `extra`.
    static func gateway(_ broker: BrokerAddress, _ name: String, _ extra: [String] = []) throws -> ExampleProcess {
        try ExampleProcess("ble-gateway", ["--simulate", "--json", "--broker", broker.description, "--gateway", name] + extra,
                           bus: "unix:path=/nonexistent")
    }

    static func topic(_ gateway: String, _ rest: String) -> String { "bluecap/\(gateway)/\(rest)" }

    @Test("--simulate publishes availability, device state, readings, advertisements and Home Assistant discovery; SIGTERM publishes offline")
    func publishes() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.stop() }
        let watcher = try MQTTWatcher(broker.address, filters: ["bluecap/#", "homeassistant/#"])
        defer { watcher.close() }
        try await watcher.connected()
        let gw = try Self.gateway(broker.address, "t1")
        try await watcher.wait(Self.topic("t1", "status")) { $0.text == "online" }
        try await watcher.wait(Self.topic("t1", "\(Self.tag)/state")) { $0.json?["connected"] as? Bool == true }
        let reading = try await watcher.wait(Self.topic("t1", "\(Self.tag)/accelerometer"))
        let value = try #require(reading.json?["value"] as? [String: Any], "reading: \(reading.text)")
        #expect(value["x"] is Double && value["y"] is Double && value["z"] is Double, "reading: \(reading.text)")
        #expect((reading.json?["hex"] as? String)?.count == 6)
        // The write on connect enabled the accelerometer; the read shows it.
        try await watcher.wait(Self.topic("t1", "\(Self.tag)/enabled")) { $0.json?["value"] as? Int == 1 }
        let adv = try await watcher.wait(Self.topic("t1", "adv/C0:FF:EE:00:10:01"))
        let bthome = try #require(adv.json?["bthome"] as? [String: Any], "adv: \(adv.text)")
        #expect(bthome["temperature"] is Double && bthome["battery"] as? Int == 97, "adv: \(adv.text)")
        try await watcher.wait(Self.topic("t1", "adv/C0:FF:EE:00:10:02")) { ($0.json?["manufacturerData"] as? [String: Any])?["89"] as? String == "01020304" }
        let discovery = try await watcher.wait("homeassistant/sensor/t1_bluecap_00b10e5c0001_accelerometer_x/config")
        #expect(discovery.json?["state_topic"] as? String == Self.topic("t1", "\(Self.tag)/accelerometer"))
        #expect(discovery.json?["availability_topic"] as? String == Self.topic("t1", "status"))
        #expect(discovery.json?["unit_of_measurement"] as? String == "g")
        let count = watcher.messages.items.count
        gw.send(SIGTERM)
        #expect(try await gw.exitCode(within: .seconds(15)) == 0, "stderr: \(gw.stderr)")
        try await watcher.wait(Self.topic("t1", "status"), from: count) { $0.text == "offline" }
    }

    @Test("the gateway killed (SIGKILL, no goodbye): the broker publishes its last will, offline, retained")
    func lastWill() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.stop() }
        let watcher = try MQTTWatcher(broker.address, filters: ["bluecap/#"])
        defer { watcher.close() }
        try await watcher.connected()
        let gw = try Self.gateway(broker.address, "t5")
        try await watcher.wait(Self.topic("t5", "status")) { $0.text == "online" }
        let count = watcher.messages.items.count
        gw.send(SIGKILL)
        _ = try? await gw.exitCode(within: .seconds(10))
        // The broker notices the lost connection and publishes the will (keepalive 15 s at most).
        try await watcher.wait(Self.topic("t5", "status"), from: count, timeout: .seconds(40)) { $0.text == "offline" }
        // Retained: a subscriber arriving later reads offline at once.
        let late = try MQTTWatcher(broker.address, filters: [Self.topic("t5", "status")])
        defer { late.close() }
        try await late.wait(Self.topic("t5", "status")) { $0.text == "offline" }
    }

    @Test("a …/set write reaches the simulated SensorTag and its result, with the value read back, is published; bad payloads are refused with the reason and change nothing")
    func setWrites() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.stop() }
        let watcher = try MQTTWatcher(broker.address, filters: ["bluecap/#"])
        defer { watcher.close() }
        try await watcher.connected()
        let gw = try Self.gateway(broker.address, "t2")
        try await watcher.wait(Self.topic("t2", "\(Self.tag)/period")) { $0.json?["value"] as? Int == 100 }
        let set = Self.topic("t2", "\(Self.tag)/period/set")
        let result = set + "/result"

        watcher.publish(set, #"{"value": 30, "id": "w1"}"#)
        let ok = try await watcher.wait(result) { $0.json?["id"] as? String == "w1" }
        #expect(ok.json?["ok"] as? Bool == true, "result: \(ok.text)")
        #expect(ok.json?["value"] as? Int == 30, "the value read back from the peripheral: \(ok.text)")
        try await watcher.wait(Self.topic("t2", "\(Self.tag)/period")) { $0.json?["value"] as? Int == 30 }

        let refusals: [(String, String)] = [
            (#"{"value": 300, "id": "w2"}"#, "0 to 255"),
            (#"{"value": true, "id": "w3"}"#, "whole number"),
            (#"{"hex": "zz", "id": "w4"}"#, "hex"),
            (#"{"value": 1, "hex": "01", "id": "w5"}"#, "exactly one"),
            (#"{"value": 1, "sudo": 1, "id": "w6"}"#, "unknown key"),
        ]
        for (payload, reason) in refusals {
            let id = (ExampleProcess.parse(payload)?["id"] as? String)!
            watcher.publish(set, payload)
            let refused = try await watcher.wait(result) { $0.json?["id"] as? String == id }
            #expect(refused.json?["ok"] as? Bool == false)
            #expect(refused.error.contains(reason), "\(payload) → \(refused.text)")
        }
        let count = watcher.messages.items.count
        watcher.publish(set, "not json")
        let garbage = try await watcher.wait(result, from: count)
        #expect(garbage.json?["ok"] as? Bool == false && garbage.error.contains("JSON object"), "\(garbage.text)")
        watcher.publish(set, String(repeating: "x", count: 5000))
        let big = try await watcher.wait(result, from: count + 1) { $0.error.contains("larger") }
        #expect(big.json?["ok"] as? Bool == false)
        // Not writable in the configuration: refused, nothing written.
        watcher.publish(Self.topic("t2", "\(Self.tag)/accelerometer/set"), #"{"hex": "000000", "id": "w7"}"#)
        let ro = try await watcher.wait(Self.topic("t2", "\(Self.tag)/accelerometer/set/result")) { $0.json?["id"] as? String == "w7" }
        #expect(ro.json?["ok"] as? Bool == false && ro.error.contains("not writable"), "\(ro.text)")
        // The period is still 30 on the peripheral: write 30 again and read back 30.
        watcher.publish(set, #"{"hex": "1e", "id": "w8"}"#)
        let again = try await watcher.wait(result) { $0.json?["id"] as? String == "w8" }
        #expect(again.json?["value"] as? Int == 30)
        gw.send(SIGTERM)
        #expect(try await gw.exitCode(within: .seconds(15)) == 0, "stderr: \(gw.stderr.suffix(4000))")
        let events = gw.events
        #expect(events.filter { $0["event"] as? String == "write-refused" }.count >= 7, "events: \(events)")
    }

    @Test("the broker killed and restarted: readings queue (bounded by --queue), the overflow is dropped and counted, the gateway reconnects and republishes its retained state")
    func brokerRestart() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.stop() }
        let watcher = try MQTTWatcher(broker.address, filters: ["bluecap/#"])
        defer { watcher.close() }
        try await watcher.connected()
        let gw = try Self.gateway(broker.address, "t3", ["--queue", "5"])
        try await watcher.wait(Self.topic("t3", "\(Self.tag)/accelerometer"))
        // 10 readings a second (period raw 10 = 100 ms).
        watcher.publish(Self.topic("t3", "\(Self.tag)/period/set"), #"{"value": 10}"#)
        try await watcher.wait(Self.topic("t3", "\(Self.tag)/period/set/result")) { $0.json?["ok"] as? Bool == true }

        broker.kill()
        _ = try await gw.waitLine("broker-disconnected") { ExampleProcess.parse($0)?["event"] as? String == "broker-disconnected" }
        let dropping = try await gw.waitLine("dropping", timeout: .seconds(20)) { ExampleProcess.parse($0)?["event"] as? String == "dropping" }
        // 5 readings, plus at most the few retained state messages (never dropped).
        #expect((5...10).contains(ExampleProcess.parse(dropping)?["queued"] as? Int ?? 0), "\(dropping)")
        try await broker.restart()
        _ = try await gw.waitLine("broker-connected again", timeout: .seconds(30)) {
            let e = ExampleProcess.parse($0)
            return e?["event"] as? String == "broker-connected" && e?["reconnects"] as? Int == 1
        }
        try await watcher.connected(2, timeout: .seconds(30))
        // The broker kept nothing (no persistence): availability and device state are there again
        // only because the gateway republished them. A new subscriber reads them as retained
        // values (the first one may have reconnected after the gateway published them).
        let fresh = try MQTTWatcher(broker.address, filters: ["bluecap/#"])
        defer { fresh.close() }
        try await fresh.wait(Self.topic("t3", "status")) { $0.text == "online" }
        try await fresh.wait(Self.topic("t3", "\(Self.tag)/state")) { $0.json?["connected"] as? Bool == true }
        let stats = try await fresh.wait(Self.topic("t3", "stats"), timeout: .seconds(30)) { ($0.json?["dropped"] as? Int ?? 0) > 0 }
        #expect(stats.json?["reconnects"] as? Int == 1, "\(stats.text)")
        try await watcher.wait(Self.topic("t3", "\(Self.tag)/accelerometer"), from: watcher.messages.items.count)
        gw.send(SIGTERM)
        #expect(try await gw.exitCode(within: .seconds(15)) == 0, "stderr: \(gw.stderr.suffix(4000))")
    }

    @Test("a broker that is not there yet: the gateway says so (cause and fix), keeps trying, and connects once it runs")
    func brokerLater() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.stop() }
        broker.kill()
        let gw = try Self.gateway(broker.address, "t4")
        let unreachable = try await gw.waitLine("broker-unreachable") { ExampleProcess.parse($0)?["event"] as? String == "broker-unreachable" }
        #expect(unreachable.contains("127.0.0.1:\(broker.port)"))
        #expect(gw.stderr.contains("--broker HOST:PORT") || unreachable.contains("refused"), "\(unreachable)\n\(gw.stderr)")
        try await broker.restart()
        let watcher = try MQTTWatcher(broker.address, filters: ["bluecap/#"])
        defer { watcher.close() }
        _ = try await gw.waitLine("broker-connected", timeout: .seconds(30)) { ExampleProcess.parse($0)?["event"] as? String == "broker-connected" }
        try await watcher.wait(Self.topic("t4", "status")) { $0.text == "online" }
        try await watcher.wait(Self.topic("t4", "\(Self.tag)/accelerometer"))
        gw.send(SIGTERM)
        #expect(try await gw.exitCode(within: .seconds(15)) == 0, "stderr: \(gw.stderr.suffix(4000))")
    }

    @Test("a bad configuration: exit 64 and a message naming the file, the place in it and what is wrong", arguments: [
        (#"{"devices": [{"address": "kitchen", "characteristics": []}]}"#, "devices[0].address"),
        (#"{"devices": [{"address": "C0:FF:EE:00:00:01", "characteristics": [{"uuid": "2A19", "nottify": true}]}]}"#, "unknown key \"nottify\""),
        (#"{"broker": "localhost:99999"}"#, "port"),
        (#"{"devices": [}"#, "not valid JSON"),
    ])
    func badConfig(text: String, expected: String) async throws {
        let path = NSTemporaryDirectory() + "gateway-config-\(UInt32.random(in: 0...UInt32.max)).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gw = try ExampleProcess("ble-gateway", ["--config", path], bus: "unix:path=/nonexistent")
        #expect(try await gw.exitCode(within: .seconds(15)) == 64)
        #expect(gw.stderr.contains(path) && gw.stderr.contains(expected), "stderr: \(gw.stderr)")
    }
}
