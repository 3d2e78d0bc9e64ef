// RecordOptions: bluez-record's command line.

// MARK: - RecordOptions

/// `bluez-record [--bus ADDRESS] (--pid PID | --name :1.N | -- COMMAND ARGS…) --output FILE
/// [--anonymize] [--max-bytes N] [--duration SECONDS] [--note TEXT]`.
struct RecordOptions {
    var bus: String?
    var pid: Int32?
    var name: String?
    var command: [String] = []
    var output = ""
    var anonymize = false
    var maxBytes = 16 << 20
    var duration: Double?
    var note = ""

    static let usage = """
        usage: bluez-record (--pid PID | --name UNIQUE-NAME | -- COMMAND [ARGS…]) --output FILE
                            [--bus ADDRESS] [--anonymize] [--max-bytes N] [--duration SECONDS] [--note TEXT]

        Records the org.bluez traffic of one process (its calls to bluetoothd with the replies,
        bluetoothd's signals, bluetoothd's calls into it) into a scenario file that
        BlueZSimulator's BlueZReplayer plays back in a test. Monitoring the system bus needs root.
          --pid PID          the process to record (its connections are found by PID)
          --name NAME        the unique bus name (:1.42) of the connection to record
          -- COMMAND ARGS    start COMMAND and record it until it exits
          --output FILE      where the scenario goes (written when recording stops)
          --bus ADDRESS      the bus to monitor (default: the system bus)
          --anonymize        replace Bluetooth addresses consistently (paths and values)
          --max-bytes N      stop adding events once the file would exceed N bytes (default 16 MiB)
          --duration S       stop after S seconds (default: until the command exits or Ctrl-C)
          --note TEXT        a description stored in the file
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws(RecordError) -> RecordOptions {
        var o = RecordOptions()
        var rest = arguments[...]
        func value(_ flag: String) throws(RecordError) -> String {
            guard let v = rest.popFirst() else { throw RecordError("\(flag) needs a value\n\(usage)") }
            return v
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "--bus": o.bus = try value(arg)
            case "--pid":
                let v = try value(arg)
                guard let pid = Int32(v), pid > 0 else { throw RecordError("--pid \(v): expected a process id") }
                o.pid = pid
            case "--name": o.name = try value(arg)
            case "--output", "-o": o.output = try value(arg)
            case "--anonymize": o.anonymize = true
            case "--max-bytes":
                let v = try value(arg)
                guard let n = Int(v), n > 0 else { throw RecordError("--max-bytes \(v): expected a positive number of bytes") }
                o.maxBytes = n
            case "--duration":
                let v = try value(arg)
                guard let d = Double(v), d > 0 else { throw RecordError("--duration \(v): expected seconds > 0") }
                o.duration = d
            case "--note": o.note = try value(arg)
            case "--": o.command = Array(rest); rest = []
            case "--help", "-h": throw RecordError(usage)
            default: throw RecordError("unknown argument \(arg)\n\(usage)")
            }
        }
        let targets = (o.pid != nil ? 1 : 0) + (o.name != nil ? 1 : 0) + (o.command.isEmpty ? 0 : 1)
        guard targets == 1 else { throw RecordError("give exactly one of --pid, --name or -- COMMAND\n\(usage)") }
        guard !o.output.isEmpty else { throw RecordError("--output FILE is required\n\(usage)") }
        return o
    }
}
