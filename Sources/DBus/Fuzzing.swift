// Entry points for the fuzz targets: wire bytes in, Swift values out, through the libdbus gateway.

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

    private static func wire(_ m: OwnedMessage, serial: UInt32) throws(DBusCallError) -> [UInt8] {
        LibDBus.setSerial(m.raw, serial)
        guard let bytes = LibDBus.marshal(m.raw) else { throw .invalidMessage("dbus_message_marshal failed") }
        return bytes
    }
}
