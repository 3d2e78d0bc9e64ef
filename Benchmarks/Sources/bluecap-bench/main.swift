// bluecap-bench: performance checks.
//
//   bluecap-bench ping [count]   sequential org.freedesktop.DBus.Peer.Ping calls/s through the
//                                DBus module vs. the same loop written directly on libdbus.
//   bluecap-bench futures [runs | --runs N] [--elements N]
//                                Futures micro-benchmark (ns per operation, min / median / max)
//                                next to CheckedContinuation and AsyncStream baselines.
//   bluecap-bench futures-op NAME COUNT
//                                one futures workload (complete, map, flatmap, stream,
//                                continuation, asyncstream) run once, for instruction counting.
//   bluecap-bench server-notify [count] [rounds]
//                                the peripheral role's notifications through the acquired socket
//                                against PropertiesChanged, on the simulator (ServerNotifyBench.swift).
//   bluecap-bench client <workload> --variant futurestream|async|acquire ...
//                                the BlueCapKit peer of Benchmarks/harness (Client.swift).
import CDBus
import BlueCapTesting
import DBus
import Foundation

func rate(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let d = ContinuousClock.now - start
    let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    return Double(count) / seconds
}

/// The baseline: dbus_connection_send_with_reply_and_block in a loop, no library.
func rawPing(address: String, target: String, count: Int) throws -> Double {
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    guard let conn = dbus_connection_open_private(address, &error), dbus_bus_register(conn, &error) != 0 else {
        throw NSError(domain: "raw", code: 1, userInfo: [NSLocalizedDescriptionKey: String(cString: error.message)])
    }
    defer {
        dbus_connection_close(conn)
        dbus_connection_unref(conn)
    }
    return try rate(count) {
        for _ in 0..<count {
            let msg = dbus_message_new_method_call(target, "/", "org.freedesktop.DBus.Peer", "Ping")
            let reply = dbus_connection_send_with_reply_and_block(conn, msg, 25_000, &error)
            dbus_message_unref(msg)
            guard let reply else {
                throw NSError(domain: "raw", code: 2, userInfo: [NSLocalizedDescriptionKey: String(cString: error.message)])
            }
            dbus_message_unref(reply)
        }
    }
}

func ping(count: Int) async throws {
    let daemon = try BusDaemon()
    defer { daemon.stop() }
    let target = try Connection(address: daemon.address)
    let client = try Connection(address: daemon.address)
    defer {
        client.close()
        target.close()
    }
    func libraryCall() throws {
        _ = try client.callBlocking(destination: target.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }
    // Warm up both paths.
    for _ in 0..<500 { try libraryCall() }
    _ = try rawPing(address: daemon.address, target: target.uniqueName, count: 500)

    let raw = try rawPing(address: daemon.address, target: target.uniqueName, count: count)
    let blocking = try rate(count) { for _ in 0..<count { try libraryCall() } }
    let start = ContinuousClock.now
    for _ in 0..<count {
        _ = try await client.call(destination: target.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }
    let d = ContinuousClock.now - start
    let asyncRate = Double(count) / (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)

    print("ping: \(count) sequential Peer.Ping calls to a DBus-module connection on a private bus")
    print(String(format: "  raw libdbus (send_with_reply_and_block): %8.0f calls/s", raw))
    print(String(format: "  DBus.Connection.callBlocking:             %8.0f calls/s  (%.2fx raw)", blocking, blocking / raw))
    print(String(format: "  DBus.Connection.call (async):             %8.0f calls/s  (%.2fx raw)", asyncRate, asyncRate / raw))
}

let args = CommandLine.arguments.dropFirst()
switch args.first {
case "ping":
    let count = args.dropFirst().first.flatMap(Int.init) ?? 20_000
    do { try await ping(count: count) } catch {
        FileHandle.standardError.write(Data("bluecap-bench ping: \(error)\n".utf8))
        exit(1)
    }
case "futures":
    let rest = Array(args.dropFirst())
    func option(_ name: String) -> Int? {
        rest.firstIndex(of: name).flatMap { rest.indices.contains($0 + 1) ? Int(rest[$0 + 1]) : nil }
    }
    let runs = option("--runs") ?? rest.first.flatMap(Int.init) ?? 7
    await runFuturesBench(runs: runs, elements: option("--elements") ?? 1_000_000)
case "futures-op":
    let rest = Array(args.dropFirst())
    guard rest.count == 2, let count = Int(rest[1]), await runFuturesWorkload(rest[0], count: count) else {
        print("usage: bluecap-bench futures-op complete|map|flatmap|stream|continuation|asyncstream COUNT")
        exit(2)
    }
case "server-notify":
    let rest = Array(args.dropFirst())
    do { try await serverNotifyBench(count: rest.first.flatMap(Int.init) ?? 5_000, rounds: rest.dropFirst().first.flatMap(Int.init) ?? 3) } catch {
        FileHandle.standardError.write(Data("bluecap-bench server-notify: \(error)\n".utf8))
        exit(1)
    }
case "client":
    do { try await runClient(args.dropFirst()) } catch {
        FileHandle.standardError.write(Data("bluecap-bench client: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
default:
    print("usage: bluecap-bench ping [count] | futures [--runs N] [--elements N] | futures-op NAME COUNT | server-notify [count] [rounds] | client <workload> --variant V [options]")
    exit(args.isEmpty ? 0 : 2)
}
