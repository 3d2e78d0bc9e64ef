// Building outgoing messages from Swift values (any thread).

enum MessageBuilder {
    static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, member: String, arguments: [DBusValue]
    ) throws(DBusCallError) -> OwnedMessage {
        if let destination, !LibDBus.isValidBusName(destination) { throw .invalidMessage("invalid bus name \"\(destination)\"") }
        if let interface, !LibDBus.isValidInterface(interface) { throw .invalidMessage("invalid interface \"\(interface)\"") }
        guard LibDBus.isValidMember(member) else { throw .invalidMessage("invalid member \"\(member)\"") }
        guard let raw = LibDBus.newMethodCall(destination: destination, path: path.rawValue, interface: interface, member: member) else {
            throw .invalidMessage("out of memory")
        }
        let message = OwnedMessage(raw)
        try Marshaling.append(arguments, to: raw)
        return message
    }

    static func signal(
        path: ObjectPath, interface: String, member: String, arguments: [DBusValue], destination: String?
    ) throws(DBusCallError) -> OwnedMessage {
        guard LibDBus.isValidInterface(interface) else { throw .invalidMessage("invalid interface \"\(interface)\"") }
        guard LibDBus.isValidMember(member) else { throw .invalidMessage("invalid member \"\(member)\"") }
        if let destination, !LibDBus.isValidBusName(destination) { throw .invalidMessage("invalid bus name \"\(destination)\"") }
        guard let raw = LibDBus.newSignal(path: path.rawValue, interface: interface, member: member) else {
            throw .invalidMessage("out of memory")
        }
        let message = OwnedMessage(raw)
        if let destination { LibDBus.setDestination(raw, destination) }
        try Marshaling.append(arguments, to: raw)
        return message
    }

    static func methodReturn(to call: CallOrigin, values: [DBusValue]) throws(DBusCallError) -> OwnedMessage {
        guard let raw = LibDBus.newMethodReturn(replySerial: call.serial, destination: call.sender) else {
            throw .invalidMessage("out of memory")
        }
        let message = OwnedMessage(raw)
        try Marshaling.append(values, to: raw)
        return message
    }

    static func error(to call: CallOrigin, name: String, message text: String) -> OwnedMessage? {
        let name = LibDBus.isValidErrorName(name) ? name : DBusRemoteError.failed
        let text = text.utf8.contains(0) ? String(text.prefix { $0 != "\0" }) : text
        return LibDBus.newError(replySerial: call.serial, destination: call.sender, name: name, message: text).map(OwnedMessage.init)
    }
}

/// What a reply needs to know about the call it answers.
struct CallOrigin: Sendable {
    var serial: UInt32
    var sender: String?
}
