// BlueZRecorder: builds a BlueZScenario from the messages a bus monitor sees.
import DBus

// MARK: - BlueZRecorder

/// Turns the messages between one app and bluetoothd, as a D-Bus monitor sees them
/// (`org.freedesktop.DBus.Monitoring.BecomeMonitor`), into a ``BlueZScenario``: the app's calls
/// to `org.bluez` with BlueZ's replies and latencies, BlueZ's signals, and BlueZ's calls into
/// the app with its answers. `bluez-record` feeds it; a test can too.
package struct BlueZRecorder: Sendable {
    /// What ``observe(_:at:)`` did with a message.
    package enum Observation: Sendable, Equatable {
        /// Added to the recording (or completed a recorded call).
        case recorded
        /// Not between the app and BlueZ.
        case ignored
        /// The size bound was reached: the message and all after it are dropped; the message
        /// says what to do.
        case full(String)
    }

    /// The recording so far.
    package private(set) var scenario: BlueZScenario
    /// The unique name of bluetoothd's connection (the owner of `org.bluez`); it follows a
    /// restart of bluetoothd (`NameOwnerChanged`).
    package private(set) var bluez: String
    /// The unique names of the app's connections.
    package var apps: Set<String>
    /// The bound on the recording's size in bytes (its file's text).
    package let maxBytes: Int
    /// The size of the recording's text so far, in bytes.
    package private(set) var bytes: Int
    private var anonymizer: AddressAnonymizer?
    /// Calls awaiting their answer: (caller, serial) → event index.
    private var pending: [String: Int] = [:]
    private var isFull = false

    /// A recorder of the traffic between `apps` and `bluez`, starting from the tree `objects`
    /// (path → interface → property → value, as `GetManagedObjects` returned it); with
    /// `anonymize`, addresses are replaced (``AddressAnonymizer``).
    package init(bluez: String, apps: Set<String>, objects: [String: [String: [String: DBusValue]]], note: String = "",
                anonymize: Bool = false, maxBytes: Int = 16 << 20) {
        self.bluez = bluez
        self.apps = apps
        self.maxBytes = maxBytes
        var anonymizer = anonymize ? AddressAnonymizer() : nil
        var tree = objects
        if anonymizer != nil {
            tree = [:]
            for (path, ifaces) in objects {
                tree[anonymizer!.text(path)] = ifaces.mapValues { $0.mapValues { anonymizer!.value($0) } }
            }
        }
        self.anonymizer = anonymizer
        scenario = BlueZScenario(note: note, objects: tree)
        bytes = scenario.text.utf8.count
    }

    /// How many distinct addresses were anonymized.
    package var anonymizedAddresses: Int { anonymizer?.count ?? 0 }

    /// Records `message`, seen `at` after the start of the recording.
    package mutating func observe(_ message: Message, at: Duration) -> Observation {
        let sender = message.sender ?? ""
        let destination = message.destination ?? ""
        let toBluez = destination == BlueZSimulator.busName || destination == bluez
        switch message.type {
        case .methodCall where apps.contains(sender) && toBluez:
            return add(.call(at: at, scenarioMessage(message), .none, latency: .zero), key: "\(sender)#\(message.serial)")
        case .methodCall where sender == bluez && apps.contains(destination):
            return add(.incoming(at: at, scenarioMessage(message), .none), key: "\(sender)#\(message.serial)")
        case .signal where sender == bluez && (destination.isEmpty || apps.contains(destination)):
            return add(.signal(at: at, scenarioMessage(message)), key: nil)
        case .signal where Self.isBlueZOwnerChange(message):
            // bluetoothd went away or came back: recorded as the bus sent it, and followed.
            // While nobody owns the name, the bus answers the app's calls itself (recorded with
            // its error: the replay answers them so when they come late).
            if case .string(let owner) = message.body[2] { bluez = owner }
            return add(.signal(at: at, ScenarioMessage(path: message.path?.rawValue ?? "/", interface: message.interface ?? "",
                                                       member: message.member ?? "", arguments: message.body)), key: nil)
        case .methodReturn, .error:
            guard let serial = message.replySerial, let index = pending.removeValue(forKey: "\(destination)#\(serial)") else { return .ignored }
            let outcome: ScenarioOutcome = if message.type == .error {
                .error(name: message.errorName ?? "", message: { if case .string(let s)? = message.body.first { s } else { "" } }())
            } else {
                .reply(message.body.map { anonymizer == nil ? $0 : anonymizer!.value($0) })
            }
            switch scenario.events[index] {
            case .call(let start, let m, _, _): scenario.events[index] = .call(at: start, m, outcome, latency: at - start)
            case .incoming(let start, let m, _): scenario.events[index] = .incoming(at: start, m, outcome)
            case .signal: return .ignored
            }
            bytes += BlueZScenario.line(scenario.events[index]).utf8.count - BlueZScenario.line(scenario.events[index].withoutOutcome).utf8.count
            return .recorded
        default:
            return .ignored
        }
    }

    /// Whether `message` is the bus's `NameOwnerChanged` for `org.bluez`.
    package static func isBlueZOwnerChange(_ message: Message) -> Bool {
        message.sender == "org.freedesktop.DBus" && message.interface == "org.freedesktop.DBus" && message.member == "NameOwnerChanged"
            && message.body.count == 3 && message.body[0] == .string(BlueZSimulator.busName)
    }

    private mutating func add(_ event: ScenarioEvent, key: String?) -> Observation {
        let size = BlueZScenario.line(event).utf8.count + 1
        guard !isFull, bytes + size <= maxBytes else {
            let first = !isFull
            isFull = true
            return .full(first
                ? "the recording reached its size bound of \(maxBytes) bytes after \(scenario.events.count) events; what follows is not recorded (raise --max-bytes to record more)"
                : "")
        }
        bytes += size
        if let key { pending[key] = scenario.events.count }
        scenario.events.append(event)
        return .recorded
    }

    private mutating func scenarioMessage(_ m: Message) -> ScenarioMessage {
        let message = ScenarioMessage(path: m.path?.rawValue ?? "/", interface: m.interface ?? "", member: m.member ?? "", arguments: m.body)
        return anonymizer == nil ? message : anonymizer!.message(message)
    }
}

extension ScenarioEvent {
    /// The event as it was before its answer came.
    var withoutOutcome: ScenarioEvent {
        switch self {
        case .call(let at, let m, _, _): .call(at: at, m, .none, latency: .zero)
        case .incoming(let at, let m, _): .incoming(at: at, m, .none)
        case .signal: self
        }
    }
}
