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

    /// Compares ``SignalView``'s in-place readers with the full decoding of the same message
    /// (``Message``): nil when they agree, else what differs. Each reader must give exactly what
    /// the decoded body says — except nil where the first argument's length word reads the same
    /// in both byte orders (the readers then cannot tell the order and leave the message to
    /// the decoder).
    public static func inPlaceReaderMismatch(messageBytes: UnsafeRawBufferPointer) -> String? {
        withSignalView(messageBytes: messageBytes) { view -> String? in
            let message = Message(raw: view.raw)
            let expected = loneChange(message)
            let basic = view.onlyChangedBasicProperty()
            let basicExpected = expected.flatMap { readInPlace($0.value) ? $0 : nil }
            if basic?.interface != basicExpected?.interface || basic?.name != basicExpected?.name || !same(basic?.value, basicExpected?.value) {
                return "onlyChangedBasicProperty: \(String(describing: basic)), decoded \(String(describing: basicExpected))"
            }
            // The interface and name asked for are the message's own (when it has them) and
            // another one.
            let interface = (message.body.first).flatMap { try? $0.as(String.self) } ?? "org.bluez.GattCharacteristic1"
            let name = expected?.name ?? "Value"
            for (i, n) in [(interface, name), (interface + "x", name), (interface, name + "x")] {
                let bytes = view.onlyChangedBytes(interface: i, property: n)
                var bytesExpected: Data?
                if let expected, expected.interface == i, expected.name == n, case .array(.byte, _) = expected.value {
                    bytesExpected = (try? expected.value.as([UInt8].self)).map { Data($0) }
                }
                if bytes != bytesExpected {
                    return "onlyChangedBytes(\(i), \(n)): \(String(describing: bytes)), decoded \(String(describing: bytesExpected))"
                }
                // The reader both routes use: the same answers through one read.
                let change = view.onlyChangedProperty()
                let asked = change.map { $0.isProperty(n, of: i) && $0.bytes != nil } ?? false
                if asked != (bytesExpected != nil) || (asked && change?.bytes != bytesExpected) {
                    return "onlyChangedProperty as (\(i), \(n)): \(String(describing: change?.bytes)), decoded \(String(describing: bytesExpected))"
                }
            }
            let change = view.onlyChangedProperty()
            if let basic, change?.interface != basic.interface || change?.name != basic.name || !same(change?.basicValue, basic.value) {
                return "onlyChangedProperty: \(String(describing: change?.basicValue)), onlyChangedBasicProperty \(basic)"
            }
            return nil
        } ?? nil
    }

    /// The lone change of a decoded PropertiesChanged body (`sa{sv}as`, one entry, nothing
    /// invalidated) whose value is basic or a byte array, as the in-place readers should find it.
    private static func loneChange(_ message: Message) -> (interface: String, name: String, value: DBusValue)? {
        guard message.signature == "sa{sv}as", message.body.count == 3,
              case .string(let interface) = message.body[0],
              case .dict(_, _, let entries) = message.body[1], entries.count == 1,
              case .array(_, let invalidated) = message.body[2], invalidated.isEmpty,
              case .string(let name) = entries[0].key, case .variant(let value) = entries[0].value else { return nil }
        let length = UInt32(interface.utf8.count)
        guard length != length.byteSwapped else { return nil }
        if case .array(.byte, _) = value { return (interface, name, value) }
        return readInPlace(value) ? (interface, name, value) : nil
    }

    /// Equal values, a double compared by its bits (NaN included).
    private static func same(_ a: DBusValue?, _ b: DBusValue?) -> Bool {
        if case .double(let x)? = a, case .double(let y)? = b { return x.bitPattern == y.bitPattern }
        return a == b
    }

    /// The basic values the in-place reader decodes (not signatures or file descriptors).
    private static func readInPlace(_ value: DBusValue) -> Bool {
        switch value {
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath: true
        default: false
        }
    }

    private static func wire(_ m: OwnedMessage, serial: UInt32) throws(DBusCallError) -> [UInt8] {
        LibDBus.setSerial(m.raw, serial)
        guard let bytes = LibDBus.marshal(m.raw) else { throw .invalidMessage("dbus_message_marshal failed") }
        return bytes
    }
}
