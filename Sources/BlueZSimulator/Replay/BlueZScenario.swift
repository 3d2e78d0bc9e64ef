// BlueZScenario: a recording of one app's traffic with BlueZ, as a versioned line-oriented file.
import DBus
import Foundation

// MARK: - BlueZScenario

/// A recording of what passed between one app and bluetoothd (`org.bluez`): the object tree
/// at the start (`ObjectManager.GetManagedObjects`), then every signal, every call of the app
/// with BlueZ's reply or error and its latency, and every call BlueZ made into the app (agent,
/// GATT application, advertisement) with the app's answer. `bluez-record` writes it;
/// ``BlueZReplayer`` plays it back to the app under test.
///
/// The file is JSON Lines (one JSON object per line; `#` lines and blank lines are comments):
/// ```
/// {"bluez-scenario":1,"note":"central example, accelerometer"}
/// {"object":"/org/bluez/hci0","interfaces":{"org.bluez.Adapter1":{"Powered":["b",true]}}}
/// {"t":1200,"call":{"path":"/org/bluez/hci0","interface":"org.bluez.Adapter1","member":"StartDiscovery","args":[]},"reply":[],"latency":800}
/// {"t":5000,"signal":{"path":"/","interface":"org.freedesktop.DBus.ObjectManager","member":"InterfacesAdded","args":[["o","/org/bluez/hci0/dev_…"],["a{sa{sv}}",{…}]]}}
/// {"t":9000,"incoming":{"path":"/agent","interface":"org.bluez.Agent1","member":"RequestPasskey","args":[["o","…"]]},"reply":[["u",123456]]}
/// ```
/// Times (`t`, `latency`) are integer microseconds from the start of the recording. Values are
/// written as `["signature", value]` (see the DocC article "Reproducing a field bug").
public struct BlueZScenario: Sendable, Equatable {
    /// The format version this code reads and writes.
    public static let formatVersion = 1

    /// A free-form description (what was recorded, where, which bluetoothd).
    public var note: String
    /// The object tree at the start: path → interface → property → value.
    package var objects: [String: [String: [String: DBusValue]]]
    /// The events after the start, in recorded order.
    package var events: [ScenarioEvent]

    /// A scenario from its parts.
    /// The tree in a `GetManagedObjects` reply (`a{oa{sa{sv}}}`): path → interface → property → value.
    package static func objects(fromManagedObjects reply: DBusValue?) -> [String: [String: [String: DBusValue]]]? {
        guard case .dict(_, _, let objects)? = reply else { return nil }
        var out: [String: [String: [String: DBusValue]]] = [:]
        for o in objects {
            guard case .objectPath(let path) = o.key, case .dict(_, _, let ifaces) = o.value else { continue }
            for i in ifaces {
                guard case .string(let name) = i.key, case .dict(_, _, let props) = i.value else { continue }
                var values: [String: DBusValue] = [:]
                for p in props { if case .string(let k) = p.key, case .variant(let v) = p.value { values[k] = v } }
                out[path.rawValue, default: [:]][name] = values
            }
        }
        return out
    }

    package init(note: String = "", objects: [String: [String: [String: DBusValue]]] = [:], events: [ScenarioEvent] = []) {
        self.note = note
        self.objects = objects
        self.events = events
    }

    /// How many events (signals, calls of the app, calls into the app) the recording holds.
    public var eventCount: Int { events.count }

    // MARK: Reading

    /// Reads a scenario file's text. Throws ``BlueZScenarioError`` naming the line and field of
    /// the first problem (a missing header, a newer version, a value not of its signature…).
    public init(text: String) throws(BlueZScenarioError) {
        self.init()
        var sawHeader = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let number = index + 1
            guard let data = line.data(using: .utf8),
                  let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                throw BlueZScenarioError(line: number, field: "", problem: "not a JSON object on one line")
            }
            do throws(ScenarioFieldError) {
                if !sawHeader {
                    guard let version = object["bluez-scenario"].flatMap(ScenarioValueCoding.integerValue) else {
                        throw ScenarioFieldError(field: "bluez-scenario", problem: "the first line must be the header {\"bluez-scenario\":1}")
                    }
                    guard version <= Self.formatVersion, version >= 1 else {
                        throw ScenarioFieldError(field: "bluez-scenario", problem: "version \(version) is not readable here (this code reads version \(Self.formatVersion)); update BlueCap")
                    }
                    note = object["note"] as? String ?? ""
                    sawHeader = true
                } else if let path = object["object"] {
                    try readObject(path, object["interfaces"])
                } else {
                    events.append(try Self.readEvent(object))
                }
            } catch {
                throw BlueZScenarioError(line: number, field: error.field, problem: error.problem)
            }
        }
        guard sawHeader else { throw BlueZScenarioError(line: 0, field: "", problem: "empty file: no {\"bluez-scenario\":1} header") }
    }

    /// Reads the scenario file at `url` (``init(text:)``'s errors, or the file system's).
    public init(contentsOf url: URL) throws {
        try self.init(text: String(contentsOf: url, encoding: .utf8))
    }

    private mutating func readObject(_ pathJSON: Any, _ interfacesJSON: Any?) throws(ScenarioFieldError) {
        guard let path = pathJSON as? String, ObjectPath.isValid(path) else {
            throw ScenarioFieldError(field: "object", problem: "expected an object path, found \(ScenarioValueCoding.describe(pathJSON))")
        }
        guard let interfaces = interfacesJSON as? [String: Any] else {
            throw ScenarioFieldError(field: "interfaces", problem: "expected {\"interface\": {\"Property\": [\"signature\", value]}}")
        }
        var out: [String: [String: DBusValue]] = [:]
        for (name, props) in interfaces {
            guard case .dict(_, _, let entries) = try ScenarioValueCoding.decode(props, as: .dict(key: .string, value: .variant),
                                                                                 field: "interfaces.\(name)") else { continue }
            var values: [String: DBusValue] = [:]
            for e in entries { if case .string(let k) = e.key, case .variant(let v) = e.value { values[k] = v } }
            out[name] = values
        }
        objects[path] = out
    }

    private static func readEvent(_ object: [String: Any]) throws(ScenarioFieldError) -> ScenarioEvent {
        let at = try micros(object["t"], field: "t")
        if let m = object["signal"] { return .signal(at: at, try message(m, field: "signal")) }
        if let m = object["call"] {
            let latency = object["latency"] == nil ? .zero : try micros(object["latency"], field: "latency")
            return .call(at: at, try message(m, field: "call"), try outcome(object), latency: latency)
        }
        if let m = object["incoming"] { return .incoming(at: at, try message(m, field: "incoming"), try outcome(object)) }
        throw ScenarioFieldError(field: "", problem: "expected one of \"object\", \"signal\", \"call\", \"incoming\"")
    }

    private static func micros(_ json: Any?, field: String) throws(ScenarioFieldError) -> Duration {
        guard let json, let n = ScenarioValueCoding.integerValue(json), n >= 0 else {
            throw ScenarioFieldError(field: field, problem: "expected microseconds (an integer ≥ 0), found \(json.map(ScenarioValueCoding.describe) ?? "nothing")")
        }
        return .microseconds(n)
    }

    private static func message(_ json: Any, field: String) throws(ScenarioFieldError) -> ScenarioMessage {
        guard let m = json as? [String: Any] else { throw ScenarioFieldError(field: field, problem: "expected a JSON object") }
        func text(_ key: String) throws(ScenarioFieldError) -> String {
            guard let s = m[key] as? String, !s.isEmpty else { throw ScenarioFieldError(field: "\(field).\(key)", problem: "expected a non-empty string") }
            return s
        }
        let path = try text("path")
        guard ObjectPath.isValid(path) else { throw ScenarioFieldError(field: "\(field).path", problem: "\"\(path)\" is not an object path") }
        return ScenarioMessage(path: path, interface: try text("interface"), member: try text("member"),
                               arguments: try ScenarioValueCoding.decodeArguments(m["args"], field: "\(field).args"))
    }

    private static func outcome(_ object: [String: Any]) throws(ScenarioFieldError) -> ScenarioOutcome {
        if let e = object["error"] {
            guard let error = e as? [String: Any], let name = error["name"] as? String else {
                throw ScenarioFieldError(field: "error", problem: "expected {\"name\": \"org.bluez.Error.…\", \"message\": \"…\"}")
            }
            return .error(name: name, message: error["message"] as? String ?? "")
        }
        if let r = object["reply"] { return .reply(try ScenarioValueCoding.decodeArguments(r, field: "reply")) }
        return .none
    }
}
