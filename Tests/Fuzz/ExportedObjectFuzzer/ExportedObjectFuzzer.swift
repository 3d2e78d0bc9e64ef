// ExportedObjectFuzzer: hostile callers of our exported objects. Each input becomes one method
// call (HostileCall) delivered to the exported-object dispatch of a GATT application (service,
// characteristic, descriptor, ObjectManager root), an LEAdvertisement1 and an Agent1, all on one
// connection to a private bus. Built with `-sanitize=fuzzer` (and -DFUZZING) it is a libFuzzer
// target; otherwise it replays corpus files or directories given on the command line.
//
// Invariants, checked for every call:
// - the dispatch never crashes, and a call that wants a reply gets exactly one, at once (every
//   handler here answers synchronously);
// - a refused call (error reply) has a valid error name and changes nothing: not the exported
//   tree (paths, callers, interfaces, property values), not the attribute values, not the
//   notifying state, not the advertisement's or agent's state.
@_spi(Fuzzing) import DBus
@testable import BlueZ
import BlueCapTesting
import Foundation
import FuzzSupport
import Locking

// MARK: - The exported objects

/// One private bus and the objects under attack, set up once per process.
final class Target: Sendable {
    static let shared = Target()
    static let allowedCaller = ":1.4242"

    let bus: BusDaemon
    let connection: Connection
    let characteristic: LocalGattCharacteristic
    let descriptor: LocalGattDescriptor
    let advertisement: AdvertisementHandle
    let paths: [ObjectPath]
    /// Agent requests answered (and Release/Cancel calls): state the agent's owner would see.
    let agentEvents = Locked(0)
    // Kept alive: releasing an export handle unexports the object.
    private let exports: [ExportHandle]

    private init() {
        do {
            bus = try BusDaemon()
            connection = try Connection(address: bus.address)
            descriptor = LocalGattDescriptor(uuid: "2901", flags: ["read", "write"], value: Data("desc".utf8))
            characteristic = LocalGattCharacteristic(uuid: "2a37", flags: ["read", "write", "write-without-response", "notify"],
                                                     value: Data([1, 2, 3]), maxLength: 64, descriptors: [descriptor])
            let service = LocalGattService(uuid: "180d", characteristics: [characteristic])
            let app = GattApplication(root: "/org/bluecap/gatt", services: [service])
            var handles = try app.export(on: connection, allowedCaller: Self.allowedCaller)
            advertisement = AdvertisementHandle(
                advertisement: LocalAdvertisement(serviceUUIDs: ["180d"], localName: "fuzz", manufacturerData: [0x004c: Data([1, 2])]),
                connection: connection, adapter: "/org/bluez/hci0", path: "/org/bluecap/advertisement0", onRelease: nil)
            try advertisement.export(allowedCaller: Self.allowedCaller)
            let events = agentEvents
            let agent = LocalAgent(path: "/org/bluecap/agent", capability: .keyboardDisplay, handler: { responder in
                // Every well-formed request is granted, so an error reply always means the
                // call itself was refused.
                events.withLock { $0 += 1 }
                switch responder.request {
                case .requestPinCode: responder.reply(.pinCode("0000"))
                case .requestPasskey: responder.reply(.passkey(123_456))
                default: responder.reply(.accept)
                }
            }, canceled: { events.withLock { $0 += 1 } }, released: { events.withLock { $0 += 1 } })
            handles.append(try connection.export([agent.dbusInterface()], at: agent.path, allowedCaller: Self.allowedCaller))
            exports = handles
            paths = ["/org/bluecap/gatt", "/org/bluecap/gatt/service0", "/org/bluecap/gatt/service0/char0",
                     "/org/bluecap/gatt/service0/char0/desc0", "/org/bluecap/advertisement0", "/org/bluecap/agent",
                     "/org/bluecap", "/"]
        } catch {
            fatalError("ExportedObjectFuzzer: cannot set up the exported objects: \(error)")
        }
    }

    /// Everything a refused call must leave as it was.
    struct State: Equatable, CustomStringConvertible {
        let exports: DBusFuzzing.ExportSnapshot
        let value: Data, descriptorValue: Data, notifying: Bool
        let advertisementRegistered: Bool, advertisementReleased: Bool
        let agentEvents: Int

        var description: String {
            "\(exports)\nvalue=\(value as NSData) desc=\(descriptorValue as NSData) notifying=\(notifying)\n"
                + "advertisement registered=\(advertisementRegistered) released=\(advertisementReleased)\nagent events=\(agentEvents)"
        }
    }

    func state() -> State {
        State(exports: DBusFuzzing.exportSnapshot(of: connection), value: characteristic.value, descriptorValue: descriptor.value,
              notifying: characteristic.isNotifying, advertisementRegistered: advertisement.isRegistered,
              advertisementReleased: advertisement.wasReleased, agentEvents: agentEvents.withLock { $0 })
    }

    /// The state after the previous input: what the next input starts from (one snapshot per
    /// input instead of two). Only the fuzzing thread touches it.
    nonisolated(unsafe) static var last: State?
}

// MARK: - One input

func fuzzExportedObjects(_ data: Data) {
    let target = Target.shared
    var bytes = FuzzBytes(Array(data))
    let call = HostileCall(&bytes, paths: target.paths, allowedCaller: Target.allowedCaller)
    let before = Target.last ?? target.state()
    let sent: [Message]
    do {
        sent = try DBusFuzzing.dispatch(on: target.connection, sender: call.sender, path: call.path,
                                        interface: call.interface, member: call.member, arguments: call.arguments,
                                        noReply: call.noReply)
    } catch {
        return  // libdbus would not build this call (no bus could deliver it either)
    }
    let after = target.state()
    Target.last = after
    let replies = sent.filter { $0.type == .methodReturn || $0.type == .error }
    // Rendered only for a failure report.
    func what() -> String {
        "\(call.interface ?? "-").\(call.member) at \(call.path) from \(call.sender) (\(call.arguments.map { "\($0.signature)" }.joined()))"
    }
    if call.noReply {
        if !replies.isEmpty { fatalError("\(what()): no reply was asked for, got \(replies)") }
        return
    }
    guard replies.count == 1 else { fatalError("\(what()): expected one reply at once, got \(replies.count): \(sent)") }
    let reply = replies[0]
    guard reply.type == .error else { return }
    guard let name = reply.errorName, !name.isEmpty else { fatalError("\(what()): error reply without a name") }
    if sent.count != 1 { fatalError("\(what()): refused (\(name)) but also sent \(sent)") }
    if after != before { fatalError("\(what()): refused (\(name)) but the state changed:\n\(before)\n→\n\(after)") }
}

// MARK: - Entry points

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzExportedObjects(Data(bytes: bytes, count: size))
    return 0
}

/// With libFuzzer (-DFUZZING): libFuzzer's driver. Without: replays the files (or directories
/// of files) named on the command line.
@main
struct ExportedObjectFuzzerMain {
    static func main() {
        // Set up before the first input: libFuzzer's leak check looks at what each input leaves
        // allocated, and the objects under attack live as long as the process.
        // The driver runs on the connection's owner thread, so each input is dispatched in place.
        let target = Target.shared
        let arguments = Array(CommandLine.arguments.dropFirst())
        DBusFuzzing.runOnOwnerThread(of: target.connection) {
            FuzzerDriver.run(name: "ExportedObjectFuzzer", arguments: arguments, target: fuzz) { fuzzExportedObjects($0) }
        }
    }
}
