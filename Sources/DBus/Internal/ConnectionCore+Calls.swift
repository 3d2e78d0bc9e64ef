// Method calls with replies: DBusPendingCall on the owner thread.

/// One outstanding call (owner thread only, except `completion` which is Sendable).
///
/// `@unchecked Sendable`: all mutable state is touched on the owner thread only.
final class PendingCallBox: @unchecked Sendable {
    let core: ConnectionCore
    var raw: RawPendingCall?
    let timeout: Duration
    let completion: @Sendable (Result<Message, DBusCallError>) -> Void
    var done = false

    init(core: ConnectionCore, timeout: Duration, completion: @escaping @Sendable (Result<Message, DBusCallError>) -> Void) {
        self.core = core
        self.timeout = timeout
        self.completion = completion
    }
}

extension ConnectionCore {
    static let pendingNotify: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
        guard let data else { return }
        let box = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as! PendingCallBox
        box.core.completePending(box)
    }

    static func milliseconds(_ d: Duration) -> Int32 {
        let c = d.components
        let ms = c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(1, ms))
    }

    /// Sends `message` and completes `completion` on the owner thread with the reply.
    func call(_ message: OwnedMessage, timeout: Duration, completion: @escaping @Sendable (Result<Message, DBusCallError>) -> Void) {
        let submitted = perform { [self] in ownerCall(message, timeout: timeout, completion: completion) }
        if !submitted { completion(.failure(.disconnected)) }
    }

    private func ownerCall(_ message: OwnedMessage, timeout: Duration, completion: @escaping @Sendable (Result<Message, DBusCallError>) -> Void) {
        guard ownerIsOpen, let pending = LibDBus.sendWithReply(raw, message.raw, timeoutMilliseconds: Self.milliseconds(timeout)) else {
            completion(.failure(.disconnected))
            return
        }
        if Log.enabled { Log.trace("send", message.raw, connection: uniqueName) }
        let box = PendingCallBox(core: self, timeout: timeout, completion: completion)
        box.raw = pending
        ownerPending[ObjectIdentifier(box)] = box
        if !LibDBus.setNotify(pending, box: box, Self.pendingNotify) {
            completePending(box)
        }
    }

    func completePending(_ box: PendingCallBox) {
        guard !box.done, let pending = box.raw else { return }
        box.done = true
        ownerPending.removeValue(forKey: ObjectIdentifier(box))
        let reply = LibDBus.stealReply(pending)
        box.raw = nil
        LibDBus.unref(pending: pending)
        guard let reply else {
            box.completion(.failure(.disconnected))
            return
        }
        if Log.enabled { Log.trace("recv", reply, connection: uniqueName) }
        let message = Message(raw: reply)
        LibDBus.unref(message: reply)
        if message.type == .error {
            let error = message.remoteError
            if error.name == DBusRemoteError.noReply && message.sender == nil {
                let lost = !ownerIsOpen || !LibDBus.isConnected(raw)
                box.completion(.failure(lost ? .disconnected : .timeout(after: box.timeout)))
            } else {
                box.completion(.failure(.remote(error)))
            }
        } else {
            box.completion(.success(message))
        }
    }

    /// Fails every outstanding call with `.disconnected` (owner thread).
    func failAllPending() {
        let boxes = Array(ownerPending.values)
        ownerPending.removeAll()
        for box in boxes where !box.done {
            box.done = true
            if let pending = box.raw {
                LibDBus.cancel(pending)
                LibDBus.unref(pending: pending)
                box.raw = nil
            }
            box.completion(.failure(.disconnected))
        }
    }
}
