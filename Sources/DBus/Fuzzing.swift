// Entry points for the fuzz targets: wire bytes in, Swift values out, through the libdbus gateway.

import Foundation

// MARK: - DBusFuzzing

/// Decoding and encoding of whole messages from and to D-Bus wire bytes, for fuzzing and for
/// building a seed corpus. Not part of the supported API (`@_spi(Fuzzing)`).
@_spi(Fuzzing)
public enum DBusFuzzing {
    /// Parses `messageBytes` with `dbus_message_demarshal` and decodes header and body into a
    /// ``Message`` exactly as a received message is decoded; nil when libdbus rejects the bytes.
    public static func decode(messageBytes: UnsafeRawBufferPointer) -> Message? {
        _ = LibDBus.threadsInitialized
        guard let raw = LibDBus.demarshal(messageBytes) else { return nil }
        defer { LibDBus.unref(message: raw) }
        return Message(raw: raw)
    }

    /// The wire bytes (`dbus_message_marshal`) of a signal carrying `arguments`.
    public static func encodeSignal(path: ObjectPath, interface: String, member: String,
                                    arguments: [DBusValue], serial: UInt32 = 1) throws(DBusCallError) -> [UInt8] {
        let m = try MessageBuilder.signal(path: path, interface: interface, member: member, arguments: arguments, destination: nil)
        return try wire(m, serial: serial)
    }

    /// The wire bytes of a method return (to call `replySerial`) carrying `values`.
    public static func encodeReply(replySerial: UInt32, values: [DBusValue], serial: UInt32 = 2) throws(DBusCallError) -> [UInt8] {
        let m = try MessageBuilder.methodReturn(to: CallOrigin(serial: replySerial, sender: ":1.1"), values: values)
        return try wire(m, serial: serial)
    }

    /// The wire bytes of a method call carrying `arguments`.
    public static func encodeCall(destination: String?, path: ObjectPath, interface: String?, member: String,
                                  arguments: [DBusValue], serial: UInt32 = 3) throws(DBusCallError) -> [UInt8] {
        let m = try MessageBuilder.methodCall(destination: destination, path: path, interface: interface,
                                              member: member, arguments: arguments)
        return try wire(m, serial: serial)
    }

    // MARK: Signals read in place

    /// Parses `messageBytes` and hands `body` the ``SignalView`` the connection would give a
    /// subscriber's `peek` for it (valid only during the call); nil when libdbus rejects the bytes.
    public static func withSignalView<R>(messageBytes: UnsafeRawBufferPointer, _ body: (SignalView) -> R) -> R? {
        _ = LibDBus.threadsInitialized
        guard let raw = LibDBus.demarshal(messageBytes) else { return nil }
        defer { LibDBus.unref(message: raw) }
        return body(SignalView(raw: raw, path: LibDBus.path(raw).map { ObjectPath(unchecked: $0) }, sender: LibDBus.sender(raw)))
    }

    /// Compares the in-place reader of the message's body (``SignalView/body``, ``BodyReader``)
    /// with the full decoding of the same message (``Message``): nil when they agree, else what
    /// differs. When there is a reader, walking it must give every value the decoded body holds,
    /// and nothing more; there is none exactly when the first argument is not a string or object
    /// path, or its length word reads the same in both byte orders.
    public static func bodyReaderMismatch(messageBytes: UnsafeRawBufferPointer) -> String? {
        withSignalView(messageBytes: messageBytes) { view -> String? in
            let message = Message(raw: view.raw)
            let first: String? = switch message.body.first {
            case .string(let text)?: text
            case .objectPath(let path)?: path.rawValue
            default: nil
            }
            let length = first.map { UInt32($0.utf8.count) }
            let expectReader = length.map { $0 != $0.byteSwapped } ?? false
            guard var reader = view.body else { return expectReader ? "no reader for \(message.signature)" : nil }
            if !expectReader { return "a reader for \(message.signature) with first argument \(String(describing: message.body.first))" }
            // A demarshalled message has no file descriptors: the decoder stops at an `h`, at
            // any depth (a variant may hold one).
            var walk = reader
            if holdsFileDescriptor(&walk) { return nil }
            for (index, value) in message.body.enumerated() where !matches(value, &reader) {
                return "argument \(index) of \(message.signature) reads differently from \(value)"
            }
            return reader.isAtEnd ? nil : "the reader has more than the decoded \(message.signature)"
        } ?? nil
    }

    /// Whether `reader`'s next value is `value`, read; each value read through the reader's
    /// public methods.
    private static func matches(_ value: DBusValue, _ reader: inout BodyReader) -> Bool {
        switch value {
        case .array(.byte, let items):
            guard let bytes = reader.readBytes() else { return false }
            return bytes.elementsEqual(items.map { if case .byte(let b) = $0 { b } else { 0 } })
        case .array(_, let items):
            return reader.readArray { elements -> Bool? in
                items.allSatisfy { matches($0, &elements) } && elements.isAtEnd
            } == true
        case .dict(_, _, let entries):
            return reader.readArray { elements -> Bool? in
                entries.allSatisfy { entry in
                    elements.readStruct { fields -> Bool? in
                        matches(entry.key, &fields) && matches(entry.value, &fields) && fields.isAtEnd ? true : nil
                    } == true
                } && elements.isAtEnd
            } == true
        case .struct(let fields):
            return reader.readStruct { inner -> Bool? in
                fields.allSatisfy { matches($0, &inner) } && inner.isAtEnd ? true : nil
            } == true
        case .variant(let inner):
            return reader.readVariant { content -> Bool? in matches(inner, &content) && content.isAtEnd ? true : nil } == true
        default:
            return same(reader.readBasic(), value)
        }
    }

    /// Whether a value left at `reader`'s level is, or holds, a file descriptor; walks them all.
    private static func holdsFileDescriptor(_ reader: inout BodyReader) -> Bool {
        while let code = reader.nextType {
            let holds: Bool?
            switch code {
            case LibDBus.typeUnixFD: return true
            case LibDBus.typeArray: holds = reader.readArray { holdsFileDescriptor(&$0) }
            case UInt8(ascii: "("), UInt8(ascii: "{"): holds = reader.readStruct { holdsFileDescriptor(&$0) }
            case LibDBus.typeVariant: holds = reader.readVariant { holdsFileDescriptor(&$0) }
            default: holds = reader.skip() ? false : nil
            }
            guard let holds else { return false }
            if holds { return true }
        }
        return false
    }

    /// Equal values, a double compared by its bits (NaN included).
    private static func same(_ a: DBusValue?, _ b: DBusValue?) -> Bool {
        if case .double(let x)? = a, case .double(let y)? = b { return x.bitPattern == y.bitPattern }
        return a == b
    }

    private static func wire(_ m: OwnedMessage, serial: UInt32) throws(DBusCallError) -> [UInt8] {
        LibDBus.setSerial(m.raw, serial)
        guard let bytes = LibDBus.marshal(m.raw) else { throw .invalidMessage("dbus_message_marshal failed") }
        return bytes
    }
}
