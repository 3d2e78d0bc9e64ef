// The scenario file: read, written back equal, and bad input refused naming its line and field.
import BlueZSimulator
import DBus
import Foundation
import Testing

@Suite("Scenario file format")
struct ScenarioFormatTests {
    static let header = #"{"bluez-scenario":1,"note":"test"}"#

    static func read(_ lines: String...) throws(BlueZScenarioError) -> BlueZScenario {
        try BlueZScenario(text: ([header] + lines).joined(separator: "\n"))
    }

    static func error(_ lines: String...) -> BlueZScenarioError? {
        do {
            _ = try BlueZScenario(text: ([header] + lines).joined(separator: "\n"))
            return nil
        } catch {
            return error
        }
    }

    @Test("Every kind of line and value reads, and the written text reads back equal")
    func roundTrip() throws {
        let s = try Self.read(
            "# a comment",
            #"{"object":"/org/bluez/hci0","interfaces":{"org.bluez.Adapter1":{"Powered":["b",true],"Class":["u",7936],"UUIDs":["as",["180f"]],"Name":["s","hci0"]}}}"#,
            "",
            #"{"t":10,"call":{"path":"/org/bluez/hci0","interface":"org.bluez.Adapter1","member":"SetDiscoveryFilter","args":[["a{sv}",{"RSSI":["n",-70],"Transport":["s","le"]}]]},"reply":[],"latency":5}"#,
            #"{"t":20,"signal":{"path":"/","interface":"org.freedesktop.DBus.ObjectManager","member":"InterfacesAdded","args":[["o","/org/bluez/hci0/dev_01"],["a{sa{sv}}",{"org.bluez.Device1":{"ManufacturerData":["a{qv}",[[13,["ay","0a0b"]]]],"RSSI":["n",-40]}}]]}}"#,
            #"{"t":30,"call":{"path":"/org/bluez/hci0/dev_01","interface":"org.bluez.Device1","member":"Connect","args":[]},"error":{"name":"org.bluez.Error.Failed","message":"le-connection-abort-by-local"},"latency":2000000}"#,
            #"{"t":40,"incoming":{"path":"/agent","interface":"org.bluez.Agent1","member":"RequestPasskey","args":[["o","/org/bluez/hci0/dev_01"]]},"reply":[["u",123456]]}"#,
            #"{"t":50,"call":{"path":"/x","interface":"org.example.X","member":"Odd","args":[["(yd)",[1,2.5]],["x",-9000000000],["g","a{sv}"]]}}"#)
        #expect(s.note == "test")
        #expect(s.objects["/org/bluez/hci0"]?["org.bluez.Adapter1"]?["Powered"] == .bool(true))
        #expect(s.events.count == 5)
        guard case .call(let at, let m, .error(let name, _), let latency) = s.events[2] else { Issue.record("event 3: \(s.events[2])"); return }
        #expect(at == .microseconds(30) && latency == .seconds(2) && m.member == "Connect" && name == "org.bluez.Error.Failed")
        guard case .signal(_, let added) = s.events[1], case .dict(_, _, let ifaces) = added.arguments[1],
              case .dict(_, _, let props) = ifaces[0].value else { Issue.record("event 2: \(s.events[1])"); return }
        #expect(props.first { $0.key == .string("ManufacturerData") }?.value
                == .variant(.dict(key: .uint16, value: .variant, [.init(.uint16(13), .variant(.array(element: .byte, [.byte(10), .byte(11)])))])))
        #expect(s.events[3] == .incoming(at: .microseconds(40), ScenarioMessage(path: "/agent", interface: "org.bluez.Agent1", member: "RequestPasskey",
                                                                              arguments: [.objectPath("/org/bluez/hci0/dev_01")]),
                                         .reply([.uint32(123456)])))
        #expect(s.events[4].message.arguments == [.struct([.byte(1), .double(2.5)]), .int64(-9_000_000_000), .signature("a{sv}")])
        if case .call(_, _, let outcome, _) = s.events[4] { #expect(outcome == .none) }
        let again = try BlueZScenario(text: s.text)
        #expect(again == s)
        #expect(try BlueZScenario(text: again.text).text == s.text)
    }

    @Test("Bad input is refused naming the line, the field and what was expected")
    func errorsNameLineAndField() {
        #expect(Self.error(#"{"t":1,"call":{"path":"/a","interface":"i.j","member":"M","args":[["y",300]]}}"#)
                == BlueZScenarioError(line: 2, field: "call.args[0]", problem: "expected an integer in range for type y, found 300"))
        #expect(Self.error("", #"{"t":1,"signal":{"path":"nope","interface":"i.j","member":"M"}}"#)
                == BlueZScenarioError(line: 3, field: "signal.path", problem: "\"nope\" is not an object path"))
        #expect(Self.error(#"{"t":-4,"signal":{"path":"/","interface":"i.j","member":"M"}}"#)?.field == "t")
        #expect(Self.error(#"{"t":1,"signal":{"path":"/","interface":"i.j","member":"M","args":[["ay","0g"]]}}"#)?.problem
                == "expected a hex string such as \"0a1b\" for type ay, found \"0g\"")
        #expect(Self.error(#"{"object":"/a","interfaces":{"org.bluez.Device1":{"RSSI":["zz",1]}}}"#)
                == BlueZScenarioError(line: 2, field: "interfaces.org.bluez.Device1.RSSI", problem: "\"zz\" is not the signature of one complete type"))
        #expect(Self.error(#"{"t":1}"#)?.problem == "expected one of \"object\", \"signal\", \"call\", \"incoming\"")
        #expect(Self.error("{not json")?.line == 2)
        #expect(throws: BlueZScenarioError(line: 1, field: "bluez-scenario", problem: "version 2 is not readable here (this code reads version 1); update BlueCap")) {
            try BlueZScenario(text: #"{"bluez-scenario":2}"#)
        }
        #expect(throws: BlueZScenarioError.self) { try BlueZScenario(text: #"{"t":1,"signal":{}}"#) }
        #expect(throws: BlueZScenarioError(line: 0, field: "", problem: "empty file: no {\"bluez-scenario\":1} header")) {
            try BlueZScenario(text: "# nothing\n")
        }
    }
}
