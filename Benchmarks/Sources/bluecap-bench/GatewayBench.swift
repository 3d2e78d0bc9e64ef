// bluecap-bench client scan-pair / footprint: what one process with several managers costs.
//
//   scan-pair --variant single|shared|separate|gateway
//       single:   one CentralManager scanning (the reference)
//       shared:   a CentralManager scan and an Adapters scan on one BluetoothSession
//       separate: the same two scans, each on a session of its own (one bus connection each,
//                 as every manager had before sessions)
//       gateway:  the shared pair plus a PeripheralManager on the same session, with a
//                 registered GATT application (one service, a read/notify characteristic) and
//                 an advertisement: a whole gateway in one process
//   footprint --variant one-session|four-sessions
//       a CentralManager, a PeripheralManager, an Adapters list and a registered PairingAgent,
//       on one session or on four; the result gives the bus connections this process holds
//       (asked of the bus daemon), its threads and its RSS.
@_spi(Testing) import BlueCapKit
import DBus
import Dispatch
import Foundation
import Glibc

/// `scan-pair`: events counted from the central's stream (and the adapter list's, when running);
/// `central_events` is the central's alone (one per advertising report, whatever else listens).
func clientScanPair(_ o: ClientOptions) async throws {
    let first = BluetoothSession()
    let second = o.variant == "separate" ? BluetoothSession() : first
    let central = CentralManager(adapter: "hci0", session: first)
    try await central.whenPoweredOn().value
    let box = Shared()
    central.startScanning(options: ScanOptions(allowDuplicates: true)).onSuccess(context: .immediate) { p in
        box.sum.wrappingAdd(1, ordering: .relaxed)
        _ = p.rssi
    }
    let listed = Shared()
    var adapters: Adapters?
    if o.variant != "single" {
        let list = Adapters(session: second)
        _ = try await list.list().value
        list.startScanning(on: ["hci0"], options: ScanOptions(allowDuplicates: true)).onSuccess(context: .immediate) { r in
            listed.sum.wrappingAdd(1, ordering: .relaxed)
            _ = r.peripheral.rssi
        }
        adapters = list
    }
    let server = o.variant == "gateway" ? try await gatewayServer(first) : nil
    emit("ready")
    try await Task.sleep(for: .seconds(o.seconds))
    let centralEvents = box.sum.load(ordering: .relaxed), events = centralEvents + listed.sum.load(ordering: .relaxed)
    emit("result {\"events\": \(events), \"central_events\": \(centralEvents), \"seconds\": \(o.seconds), "
         + "\"connections\": \(first === second ? 1 : 2), \"rss_kb\": \(residentKB()), \"hwm_kb\": \(peakResidentKB())}")
    withExtendedLifetime((adapters, server)) {}
}

/// The peripheral role of the `gateway` variant: a service registered and advertised on `session`.
private func gatewayServer(_ session: BluetoothSession) async throws -> PeripheralManager {
    let server = PeripheralManager(adapter: "hci0", session: session)
    try await server.whenPoweredOn(timeout: .seconds(10)).value
    let serviceUUID: BLEUUID = "0000FEF0-0000-1000-8000-00805F9B34FB"
    let reading = MutableCharacteristic(uuid: "0000FEF1-0000-1000-8000-00805F9B34FB", properties: [.read, .notify],
                                        permissions: [.readable], value: Data(count: 8))
    try await server.add(MutableService(uuid: serviceUUID, characteristics: [reading])).value
    try await server.startAdvertising("Gateway", uuids: [serviceUUID]).value
    return server
}

/// `footprint`: the four members up, then connections, threads and RSS.
func clientFootprint(_ o: ClientOptions) async throws {
    let sessions = o.variant == "four-sessions" ? (0..<4).map { _ in BluetoothSession() } : [BluetoothSession()]
    let session = { (i: Int) in sessions[i % sessions.count] }
    let central = CentralManager(adapter: "hci0", session: session(0))
    let server = PeripheralManager(adapter: "hci0", session: session(1))
    let adapters = Adapters(session: session(2))
    try await central.whenPoweredOn().value
    _ = try await adapters.list().value
    for try await state in server.whenStateChanges().values where state == .poweredOn { break }
    let agent = try await PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
        .register(session: session(3), asDefault: false).value
    emit("ready")
    try await Task.sleep(for: .seconds(max(1, o.seconds)))
    let connections = try await ownConnections(probe: try sessions[0].testConnection())
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    emit("result {\"connections\": \(connections), \"threads\": \(threads), \"rss_kb\": \(residentKB())}")
    withExtendedLifetime((central, server, adapters, agent)) {}
}

/// The bus connections of this process: every unique name whose Unix process is us.
private func ownConnections(probe: Connection) async throws -> Int {
    let names = try await probe.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                     interface: "org.freedesktop.DBus", member: "ListNames", timeout: .seconds(5))
    guard case .array(_, let all)? = names.body.first else { throw ClientFailure("ListNames: \(names.body)") }
    var mine = 0
    for case .string(let name) in all where name.hasPrefix(":") {
        let pid = try? await probe.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                        interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                        arguments: [.string(name)], timeout: .seconds(5))
        if pid?.body.first == .uint32(UInt32(getpid())) { mine += 1 }
    }
    return mine
}

/// VmRSS of this process in kB (its RSS now).
func residentKB() -> Int { procStatusKB("VmRSS") }

/// VmHWM of this process in kB: its peak RSS since exec (`ru_maxrss` as the parent sees it also
/// counts the parent's pages the child had before exec, as a vfork child has them all).
func peakResidentKB() -> Int { procStatusKB("VmHWM") }

/// A "Name:  N kB" line of /proc/self/status, -1 if absent.
private func procStatusKB(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return -1 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
}

extension BluetoothSession {
    /// The session's connection, or a failure naming why there is none.
    func testConnection() throws -> Connection {
        guard let c = busConnection else { throw ClientFailure("no bus: \(unavailableReason ?? "?")") }
        return c
    }
}
