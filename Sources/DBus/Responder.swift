// Answering a method call delivered to an exported object.
import Synchronization

/// The pending answer to one method call. Call `succeed` or `fail` exactly once, from any
/// thread, whenever the handler has decided. A responder released without an answer replies
/// `org.freedesktop.DBus.Error.Failed` ("no reply from handler") so the caller never hangs.
public final class Responder: Sendable {
    private let core: ConnectionCore
    private let origin: CallOrigin
    private let noReply: Bool
    private let output: DBusSignature?
    private let answered = Atomic<Bool>(false)
    private let label: String

    init(core: ConnectionCore, origin: CallOrigin, noReply: Bool, output: DBusSignature?, label: String) {
        self.core = core
        self.origin = origin
        self.noReply = noReply
        self.output = output
        self.label = label
    }

    /// The caller's unique name.
    public var caller: String? { origin.sender }

    /// Replies with `values` (a method return). Values not matching the method's declared
    /// output signature are replaced by an error reply.
    public func succeed(_ values: [DBusValue] = []) {
        guard claim() else { return }
        guard !noReply else { return }
        if let output, DBusSignature(types: values.map(\.type)) != output {
            Log.warning("\(label) replied \(values.map(\.signature).joined()) instead of \(output)")
            sendError(DBusRemoteError.failed, "handler replied with signature \(values.map(\.signature).joined()), declared \(output)")
            return
        }
        do {
            core.send(try MessageBuilder.methodReturn(to: origin, values: values))
        } catch {
            sendError(DBusRemoteError.failed, "reply could not be built: \(error)")
        }
    }

    /// Replies with the error `name` and `message`.
    public func fail(name: String, message: String) {
        guard claim(), !noReply else { return }
        sendError(name, message)
    }

    /// Replies with `error`.
    public func fail(_ error: DBusRemoteError) { fail(name: error.name, message: error.message) }

    private func claim() -> Bool {
        if answered.exchange(true, ordering: .sequentiallyConsistent) {
            Log.warning("\(label) answered twice; the second answer is ignored")
            return false
        }
        return true
    }

    private func sendError(_ name: String, _ message: String) {
        if let m = MessageBuilder.error(to: origin, name: name, message: message) { core.send(m) }
    }

    deinit {
        if !answered.load(ordering: .sequentiallyConsistent) {
            Log.warning("\(label): responder released without an answer; replying Failed")
            if !noReply { sendError(DBusRemoteError.failed, "no reply from handler") }
        }
    }
}
