// The ble-gateway's parts without a bus: the bounded outgoing queue, BTHome decoding, broker
// addresses and `/set` topics.
import Foundation
import GatewayCore
import Testing

@Suite("ble-gateway parts")
struct GatewayPartsTests {
    static func reading(_ n: Int) -> MQTTMessage { MQTTMessage(topic: "r", text: "\(n)") }

    @Test("the queue keeps the newest readings up to its capacity, counts what it drops, and keeps one state message per topic ahead of them")
    func queueBounds() {
        var q = OutgoingQueue(capacity: 3)
        let dropped = (1...5).map { q.append(Self.reading($0)) }
        #expect(dropped == [false, false, false, true, true])
        #expect(q.dropped == 2 && q.count == 3)
        _ = q.append(MQTTMessage(topic: "s", text: "old", retain: true))
        _ = q.append(MQTTMessage(topic: "s", text: "new", retain: true))
        #expect(q.count == 4 && q.dropped == 2)
        var out: [String] = []
        while let m = q.next() { out.append(String(decoding: m.payload, as: UTF8.self)) }
        #expect(out == ["new", "3", "4", "5"])
        // A message handed back goes first again, without a drop while there is room.
        _ = q.append(Self.reading(6))
        let six = q.next()!
        q.putBack(six)
        #expect(q.next() == six && q.dropped == 2)
    }

    @Test("BTHome v2: what the simulated sensor sends decodes to its readings; encrypted or other versions do not decode")
    func bthome() throws {
        let data = BTHome.encode(temperature: -3.25, humidity: 55.5, battery: 80)
        let text = try #require(BTHome.decode(data)).text
        #expect(text == #"{"battery":80,"temperature":-3.25,"humidity":55.5}"#)
        #expect(BTHome.decode(Data([0x41, 0x01, 0x50])) == nil)   // encrypted
        #expect(BTHome.decode(Data([0x20, 0x01, 0x50])) == nil)   // version 1
        // A truncated object ends the decoding, nothing is invented.
        #expect(BTHome.decode(Data([0x40, 0x01, 0x50, 0x02, 0x10]))?.text == #"{"battery":80}"#)
    }

    @Test("--broker accepts HOST, HOST:PORT and [IPv6]:PORT and refuses a bad port")
    func brokerAddress() throws {
        #expect(try BrokerAddress(parsing: "mqtt.local") == BrokerAddress(host: "mqtt.local", port: 1883))
        #expect(try BrokerAddress(parsing: "10.0.0.2:1884") == BrokerAddress(host: "10.0.0.2", port: 1884))
        #expect(try BrokerAddress(parsing: "[::1]:8883") == BrokerAddress(host: "::1", port: 8883))
        #expect(throws: (any Error).self) { try BrokerAddress(parsing: "host:0") }
        #expect(throws: (any Error).self) { try BrokerAddress(parsing: "host:http") }
        #expect(throws: (any Error).self) { try BrokerAddress(parsing: ":1883") }
    }

    @Test("only <prefix>/<gateway>/<address>/<characteristic>/set is a write topic")
    func setTopics() {
        let t = Topics(prefix: "bluecap", gateway: "gw")
        #expect(t.parseSet("bluecap/gw/C0:FF:EE:00:00:01/period/set")! == ("C0:FF:EE:00:00:01", "period"))
        #expect(t.parseSet("bluecap/gw/C0:FF:EE:00:00:01/period/set/result") == nil)
        #expect(t.parseSet("bluecap/other/C0:FF:EE:00:00:01/period/set") == nil)
        #expect(t.parseSet("bluecap/gw/adv/set") == nil)
    }
}
