// Entry points for the hostile-caller fuzz target: a method call from a stranger, straight into
// the exported-object dispatch, and a view of the exported state to compare before and after.

internal import CDBus
import Foundation

// MARK: - Hostile calls

@_spi(Fuzzing)
extension DBusFuzzing {
    /// Builds a method call to `path` and hands it to `connection`'s exported-object dispatch
    /// (the function libdbus's filter calls for an incoming method call) on the owner thread, as
    /// if `sender` had sent it. Whatever the dispatch sends while it runs — replies, errors,
    /// `PropertiesChanged` — is kept instead of going to the bus and returned, decoded, in order.
    /// Replies a handler sends later from another thread go to the bus as usual.
    ///
    /// Throws when libdbus cannot build the call (invalid names, arguments that do not marshal).
    public static func dispatch(
        on connection: Connection, sender: String, path: ObjectPath, interface: String?, member: String,
        arguments: [DBusValue], noReply: Bool = false, serial: UInt32 = 7
    ) throws(DBusCallError) -> [Message] {
        guard LibDBus.isValidBusName(sender) else { throw .invalidMessage("invalid sender \"\(sender)\"") }
        let call = try MessageBuilder.methodCall(destination: connection.uniqueName.isEmpty ? nil : connection.uniqueName,
                                                 path: path, interface: interface, member: member, arguments: arguments)
        LibDBus.setSerial(call.raw, serial == 0 ? 1 : serial)
        _ = dbus_message_set_sender(call.raw, sender)
        dbus_message_set_no_reply(call.raw, noReply ? 1 : 0)
        let core = connection.core
        if core.isOwnerThread {
            // Called from `runOnOwnerThread`'s body: no hop. What other threads queued for the
            // owner meanwhile runs after the call, as the loop would run it.
            let messages = dispatchCapturing(call, on: core)
            for job in core.jobs.takeAll() { job() }
            return messages.map { Message(raw: $0.raw) }
        }
        let done = DispatchSemaphore(value: 0)
        let captured = CapturedMessages()
        let queued = core.perform {
            captured.messages = dispatchCapturing(call, on: core)
            done.signal()
        }
        guard queued else { throw .disconnected }
        done.wait()
        return captured.messages.map { Message(raw: $0.raw) }
    }

    /// Hands `call` to the exported-object dispatch (owner thread only) and returns what it sent,
    /// kept instead of going to the bus.
    private static func dispatchCapturing(_ call: OwnedMessage, on core: ConnectionCore) -> [OwnedMessage] {
        core.ownerCapture = []
        core.dispatchMethodCall(call.raw)
        defer { core.ownerCapture = nil }
        return core.ownerCapture ?? []
    }

    /// Runs `body` on `connection`'s owner thread and waits for it: a fuzz driver running there
    /// calls `dispatch` without two thread switches per input (half an input's time on a loaded
    /// machine). While `body` runs the connection reads nothing from the bus; jobs other threads
    /// queue run after each `dispatch`.
    public static func runOnOwnerThread(of connection: Connection, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        guard connection.core.perform({ body(); done.signal() }) else { return body() }
        done.wait()
    }

    /// Every object exported on `connection`: path, who may call it, whether it is an object
    /// manager, its interfaces in order and every property value. Two snapshots are equal exactly
    /// when a call changed none of that; comparing them builds no text (the fuzz target takes one
    /// per input), `description` renders one for a failure report.
    public static func exportSnapshot(of connection: Connection) -> ExportSnapshot {
        connection.core.exports.withLock { table in
            ExportSnapshot(objects: table.objects.map { path, object in
                ExportSnapshot.Object(path: path, allowedCaller: object.allowedCaller, isObjectManager: object.isObjectManager,
                                      token: object.token, order: object.order,
                                      values: object.order.map { object.interfaces[$0]?.values })
            }.sorted { $0.path < $1.path })
        }
    }

    /// What `exportSnapshot(of:)` returns: the export table as plain values.
    public struct ExportSnapshot: Equatable, Sendable, CustomStringConvertible {
        /// One exported object.
        public struct Object: Equatable, Sendable {
            let path: String
            let allowedCaller: String?
            let isObjectManager: Bool
            let token: Int
            let order: [String]
            /// The property values of each interface in `order` (nil: the interface is missing).
            let values: [[String: DBusValue]?]
        }

        let objects: [Object]

        /// One line per object and interface, one per property value (types included).
        public var description: String {
            objects.map { object in
                var lines = ["\(object.path) caller=\(object.allowedCaller ?? "-") manager=\(object.isObjectManager) token=\(object.token)"]
                for (name, values) in zip(object.order, object.values) {
                    guard let values else { lines.append("  \(name) missing"); continue }
                    lines.append("  \(name)")
                    for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                        lines.append("    \(key) = \(String(reflecting: value))")
                    }
                }
                return lines.joined(separator: "\n")
            }.joined(separator: "\n")
        }
    }

    /// The owner thread's captured messages, handed to the waiting caller.
    private final class CapturedMessages: @unchecked Sendable {
        // @unchecked Sendable: written on the owner thread before `done.signal()`, read by the
        // caller after `done.wait()`; the semaphore orders the two.
        var messages: [OwnedMessage] = []
    }
}
