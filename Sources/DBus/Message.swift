// A received or sent D-Bus message, as Swift values.

/// A D-Bus message: header fields and the decoded body.
public struct Message: Sendable, CustomStringConvertible {
    /// The four D-Bus message types.
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal
    }

    public var type: Kind
    /// The sender's serial for this message.
    public var serial: UInt32
    /// For replies and errors: the serial of the call answered.
    public var replySerial: UInt32?
    public var path: ObjectPath?
    public var interface: String?
    public var member: String?
    /// For errors: the D-Bus error name.
    public var errorName: String?
    public var destination: String?
    /// The sender's unique connection name (set by the bus).
    public var sender: String?
    /// The body's signature.
    public var signature: String
    /// The body.
    public var body: [DBusValue]
    /// True when the caller asked for no reply (`NO_REPLY_EXPECTED`).
    public var noReplyExpected: Bool

    /// Reads `raw` (header and body).
    init(raw: RawMessage) {
        switch LibDBus.type(raw) {
        case .methodCall: type = .methodCall
        case .methodReturn: type = .methodReturn
        case .error: type = .error
        case .signal, .invalid: type = .signal
        }
        serial = LibDBus.serial(raw)
        let rs = LibDBus.replySerial(raw)
        replySerial = rs == 0 ? nil : rs
        path = LibDBus.path(raw).map { ObjectPath(unchecked: $0) }
        interface = LibDBus.interface(raw)
        member = LibDBus.member(raw)
        errorName = LibDBus.errorName(raw)
        destination = LibDBus.destination(raw)
        sender = LibDBus.sender(raw)
        signature = LibDBus.signature(raw)
        body = Marshaling.read(raw)
        noReplyExpected = LibDBus.noReply(raw)
    }

    /// For an error message: its name and first string argument.
    var remoteError: DBusRemoteError {
        var text = ""
        if case .string(let s)? = body.first { text = s }
        return DBusRemoteError(name: errorName ?? DBusRemoteError.failed, message: text)
    }

    public var description: String {
        "\(type) #\(serial) \(sender ?? "-")→\(destination ?? "-") \(path?.rawValue ?? "-") "
            + "\(interface ?? "-").\(member ?? errorName ?? "-") (\(signature))"
    }
}

/// A method call delivered to an exported object.
public typealias MethodCall = Message
