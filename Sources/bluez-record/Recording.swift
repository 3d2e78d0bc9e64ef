// Recording: one run of bluez-record: the tree, the monitor loop, the file.
import BlueZSimulator
import DBus
import Foundation
import Synchronization

// MARK: - Recording

/// Set by SIGINT / SIGTERM: the loop stops and the file is written.
let stopRequested = Atomic<Bool>(false)

/// Records the traffic of the process `options` name between the start and its exit, a signal,
/// `--duration` or the size bound, and writes the scenario to `--output`.
final class Recording {
    let options: RecordOptions
    let address: String
    let client: Connection
    private var process: Process?
    /// Senders already checked against `--pid`: unique name → is the app.
    private var checked: [String: Bool] = [:]

    init(_ options: RecordOptions) throws {
        self.options = options
        address = options.bus ?? ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/run/dbus/system_bus_socket"
        client = try Connection(address: address)
    }

    /// Runs until the recording ends; returns the exit status (the command's, when one was started).
    func run() throws -> Int32 {
        let bluez = try bluezOwner()
        let objects = try managedObjects()
        let monitor = try MonitorConnection(address: address, rules: [
            "sender='\(bluez)'", "destination='\(BlueZSimulator.busName)'", "destination='\(bluez)'",
            // After a restart of bluetoothd: its new connection, the bus's note of the change,
            // and the bus's errors for the calls the old one left unanswered.
            "sender='\(BlueZSimulator.busName)'",
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(BlueZSimulator.busName)'",
            "type='error',sender='org.freedesktop.DBus'",
        ])
        defer { monitor.close() }
        var recorder = BlueZRecorder(bluez: bluez, apps: Set([options.name].compactMap { $0 }), objects: objects,
                                     note: options.note, anonymize: options.anonymize, maxBytes: options.maxBytes)
        var pid = options.pid
        if !options.command.isEmpty { pid = try start(options.command) }
        progress("recording \(options.name ?? "process \(pid ?? 0)")'s org.bluez traffic on \(address) into \(options.output)")
        // One line on stdout once monitoring is on: a script (or test) may start the app then.
        FileHandle.standardOutput.write(Data("recording\n".utf8))

        let start = ContinuousClock.now
        var lastProgress = start
        var commandExited = false
        var stopping = false
        loop: while true {
            // Asked to stop: one more read takes what the bus sent before the signal (the app's
            // last replies and signals), then the recording ends.
            if stopRequested.load(ordering: .relaxed) {
                if stopping { break }
                stopping = true
            }
            guard let messages = monitor.read(timeoutMilliseconds: commandExited || stopping ? 100 : 200) else {
                progress("the bus closed the connection: recording stops")
                break
            }
            for m in messages {
                let at = ContinuousClock.now - start
                if let pid, let sender = m.sender, sender != recorder.bluez, sender != "org.freedesktop.DBus", m.type == .methodCall || m.type == .methodReturn || m.type == .error {
                    if isProcess(sender, pid) { recorder.apps.insert(sender) }
                }
                if case .full(let message) = recorder.observe(m, at: at) {
                    if !message.isEmpty { progress(message) }
                    break loop
                }
            }
            let now = ContinuousClock.now
            if now - lastProgress >= .seconds(1) {
                lastProgress = now
                let seconds = Double((now - start).components.seconds) + Double((now - start).components.attoseconds) / 1e18
                progress("\(String(format: "%.1f", seconds)) s: \(recorder.scenario.events.count) events, \(recorder.bytes) bytes")
            }
            if let d = options.duration, now - start >= .seconds(d) { break }
            if commandExited { break }  // one more read drained what came before the exit
            if let p = process, !p.isRunning { commandExited = true }
        }
        try recorder.scenario.write(to: URL(fileURLWithPath: options.output))
        let events = recorder.scenario.events
        let calls = events.filter { if case .call = $0 { true } else { false } }.count
        let signals = events.filter { if case .signal = $0 { true } else { false } }.count
        progress("wrote \(options.output): \(events.count) events (\(calls) calls, \(signals) signals, \(events.count - calls - signals) calls into the app), \(recorder.bytes) bytes"
                 + (options.anonymize ? ", \(recorder.anonymizedAddresses) addresses anonymized" : ""))
        guard let process else { return 0 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    // MARK: Bus

    private func bluezOwner() throws -> String {
        do {
            let reply = try client.callBlocking(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "GetNameOwner",
                                                arguments: [.string(BlueZSimulator.busName)], timeout: .seconds(5))
            guard case .string(let owner)? = reply.body.first else { throw RecordError("GetNameOwner gave no name") }
            return owner
        } catch {
            throw RecordError("org.bluez is not on \(address) (\(error)): is bluetoothd running?")
        }
    }

    private func managedObjects() throws -> [String: [String: [String: DBusValue]]] {
        let reply = try client.callBlocking(destination: BlueZSimulator.busName, path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                                            member: "GetManagedObjects", timeout: .seconds(10))
        guard let objects = BlueZScenario.objects(fromManagedObjects: reply.body.first) else {
            throw RecordError("GetManagedObjects replied \(reply.signature)")
        }
        return objects
    }

    /// Whether `sender` is a connection of process `pid` (asked once per name).
    private func isProcess(_ sender: String, _ pid: Int32) -> Bool {
        if let known = checked[sender] { return known }
        let reply = try? client.callBlocking(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                             arguments: [.string(sender)], timeout: .seconds(2))
        let match = if case .uint32(let p)? = reply?.body.first { Int32(bitPattern: p) == pid } else { false }
        checked[sender] = match
        return match
    }

    // MARK: Command

    private func start(_ command: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: command[0].contains("/") ? command[0] : try which(command[0]))
        p.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address
        p.environment = env
        do { try p.run() } catch { throw RecordError("cannot start \(command[0]): \(error)") }
        process = p
        return p.processIdentifier
    }

    private func which(_ name: String) throws -> String {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw RecordError("\(name) is not on PATH: give its path")
    }

    private func progress(_ text: String) {
        FileHandle.standardError.write(Data("bluez-record: \(text)\n".utf8))
    }
}
