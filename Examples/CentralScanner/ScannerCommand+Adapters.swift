// ScannerCommand+Adapters: --list-adapters, --adapter all (several adapters at once) and
// --passive (advertisement monitors).

import BlueCapKit
import ExampleSupport
import Foundation

extension ScannerCommand {
    // MARK: - List mode

    /// Prints every adapter: a table, or one JSON object per line.
    static func listAdapters(_ session: BluetoothSession, _ console: Console) async -> Int32 {
        let list: [Adapter]
        do { list = try await Adapters(session: session).list().value } catch {
            console.error("cannot list the adapters: \(error)")
            return MissingBlueZ.exitCode
        }
        if !console.json {
            console.raw("NAME  ADDRESS            POWERED  DISCOVERABLE  PAIRABLE  DISCOVERING  MONITORING  ALIAS\n")
        }
        for a in list {
            let yes: (Bool) -> String = { $0 ? "yes" : "no" }
            let text = [a.name.padding(toLength: 5, withPad: " ", startingAt: 0), a.address.padding(toLength: 18, withPad: " ", startingAt: 0),
                        yes(a.powered).padding(toLength: 8, withPad: " ", startingAt: 0),
                        yes(a.discoverable).padding(toLength: 13, withPad: " ", startingAt: 0),
                        yes(a.pairable).padding(toLength: 9, withPad: " ", startingAt: 0),
                        yes(a.discovering).padding(toLength: 12, withPad: " ", startingAt: 0),
                        yes(a.supportsMonitoring).padding(toLength: 11, withPad: " ", startingAt: 0), a.alias ?? ""].joined(separator: " ")
            console.event("adapter", [
                ("name", .string(a.name)), ("address", .string(a.address)), ("alias", .optional(a.alias)),
                ("powered", .bool(a.powered)), ("discoverable", .bool(a.discoverable)), ("pairable", .bool(a.pairable)),
                ("discovering", .bool(a.discovering)), ("roles", .array(a.roles.map(JSON.string))), ("monitoring", .bool(a.supportsMonitoring)),
            ], text: text, result: true)
        }
        return 0
    }

    // MARK: - Several adapters

    /// Scans on every powered adapter; prints each device once per adapter.
    static func scanAll(_ session: BluetoothSession, _ options: ScannerOptions, _ console: Console,
                        cleanup: @escaping @Sendable () async -> Void) async -> Int32 {
        let adapters = Adapters(session: session)
        guard let names = try? await adapters.list().value.filter(\.powered).map(\.name), !names.isEmpty else {
            console.error("no powered adapter to scan on")
            return MissingBlueZ.exitCode
        }
        SignalTrap.shared.onShutdown {
            adapters.stopScanning()
            await cleanup()
        }
        SignalTrap.shared.install()
        console.event("scanning", [("adapters", .array(names.map(JSON.string)))], text: "scanning on \(names.joined(separator: ", "))")
        let stream = adapters.startScanning(on: names, forServiceUUIDs: options.services.isEmpty ? nil : options.services)
        let prefix = options.namePrefix
        stream.onSuccess { r in
            let p = r.peripheral
            if let prefix, !(p.name ?? "").hasPrefix(prefix) { return }
            console.event("discovered", [("adapter", .string(r.adapter)), ("address", .string(p.address)), ("name", .optional(p.name)),
                                         ("rssi", p.rssi.map { .integer(Int($0)) } ?? .null)],
                          text: "\(r.adapter) discovered \(p.address) \(p.name.map { "\"\($0)\"" } ?? "(no name)")", result: true)
        }
        return await run(stream, for: options.duration, console: console) { adapters.stopScanning() }
    }

    // MARK: - Passive mode

    /// Monitors advertisements passively; prints each device found and lost.
    static func passive(_ manager: CentralManager, _ options: ScannerOptions, _ console: Console,
                        cleanup: @escaping @Sendable () async -> Void) async -> Int32 {
        SignalTrap.shared.onShutdown {
            manager.stopMonitoring()
            await cleanup()
        }
        SignalTrap.shared.install()
        do { _ = try await manager.whenPoweredOn(timeout: .seconds(10)).value } catch {
            console.error(ExampleFailure.adapter(manager.state, adapter: options.adapter).description)
            return MissingBlueZ.exitCode
        }
        let adapter = manager.adapter ?? "?"
        console.event("monitoring", [("adapter", .string(adapter)), ("patterns", .array(options.passive.map { .string($0.description) }))],
                      text: "monitoring passively on \(adapter) for \(options.passive.map(\.description).joined(separator: " or "))")
        let stream = manager.startMonitoring(patterns: options.passive, rssi: MonitorRSSI())
        stream.onSuccess { event in
            let (name, p) = switch event {
            case .found(let p): ("found", p)
            case .lost(let p): ("lost", p)
            }
            console.event(name, [("adapter", .string(adapter)), ("address", .string(p.address)), ("name", .optional(p.name))],
                          text: "\(name) \(p.address) \(p.name.map { "\"\($0)\"" } ?? "")", result: true)
        }
        return await run(stream, for: options.duration, console: console) { manager.stopMonitoring() }
    }

    /// Waits for `stream` to end (or `duration` to pass, then `stop()`); 0 when it finished, 1 on failure.
    private static func run<T>(_ stream: FutureStream<T>, for duration: Duration?, console: Console,
                               stop: @escaping @Sendable () -> Void) async -> Int32 {
        let ended = Promise<(any Error)?>()
        stream.onFailure { ended.success($0) }
        stream.onFinish { ended.success(nil) }
        if let duration {
            Task {
                try? await Task.sleep(for: duration)
                stop()
            }
        }
        let failure = (try? await ended.future.value) ?? nil
        if let failure {
            console.error("\(failure)")
            return 1
        }
        console.event("done", [], text: "done")
        return 0
    }
}
