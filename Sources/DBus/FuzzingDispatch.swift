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
        let done = DispatchSemaphore(value: 0)
        let captured = CapturedMessages()
        let queued = core.perform {
            core.ownerCapture = []
            core.dispatchMethodCall(call.raw)
            captured.messages = core.ownerCapture ?? []
            core.ownerCapture = nil
            done.signal()
        }
        guard queued else { throw .disconnected }
        done.wait()
        return captured.messages.map { Message(raw: $0.raw) }
    }

    /// A rendering of every object exported on `connection`: path, who may call it, whether it
    /// is an object manager, its interfaces in order and every property value. Two snapshots are
    /// equal exactly when a call changed none of that.
    public static func exportSnapshot(of connection: Connection) -> String {
        connection.core.exports.withLock { table in
            table.objects.sorted { $0.key < $1.key }.map { path, object in
                var lines = ["\(path) caller=\(object.allowedCaller ?? "-") manager=\(object.isObjectManager) token=\(object.token)"]
                for name in object.order {
                    guard let iface = object.interfaces[name] else { lines.append("  \(name) missing"); continue }
                    lines.append("  \(name)")
                    for (key, value) in iface.values.sorted(by: { $0.key < $1.key }) {
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
