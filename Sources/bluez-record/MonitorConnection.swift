// MonitorConnection: a libdbus connection turned monitor (BecomeMonitor), read message by message.
import CDBus
@_spi(Fuzzing) import DBus

// MARK: - MonitorConnection

/// A private connection to `address` that became a monitor
/// (`org.freedesktop.DBus.Monitoring.BecomeMonitor`) for `rules`: from then on it receives a
/// copy of every message matching them and must send nothing. Read on one thread only.
final class MonitorConnection {
    private let connection: OpaquePointer

    /// Connects, registers and becomes a monitor. Throws a message naming the cause (the bus
    /// refuses monitoring to other users than root and the bus's own user).
    init(address: String, rules: [String]) throws(RecordError) {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let c = dbus_connection_open_private(address, &error) else {
            throw RecordError("cannot connect to \(address): \(Self.text(error))")
        }
        connection = c
        dbus_connection_set_exit_on_disconnect(c, 0)
        guard dbus_bus_register(c, &error) != 0 else {
            close()
            throw RecordError("cannot register on \(address): \(Self.text(error))")
        }
        guard let call = dbus_message_new_method_call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                      "org.freedesktop.DBus.Monitoring", "BecomeMonitor") else {
            close()
            throw RecordError("out of memory")
        }
        defer { dbus_message_unref(call) }
        var iter = DBusMessageIter()
        var array = DBusMessageIter()
        dbus_message_iter_init_append(call, &iter)
        dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, "s", &array)
        for rule in rules {
            rule.withCString { text in
                var pointer: UnsafePointer<CChar>? = text
                _ = dbus_message_iter_append_basic(&array, CDBUS_TYPE_STRING, &pointer)
            }
        }
        dbus_message_iter_close_container(&iter, &array)
        var flags: UInt32 = 0
        dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &flags)
        guard let reply = dbus_connection_send_with_reply_and_block(c, call, 5000, &error) else {
            close()
            throw RecordError("BecomeMonitor was refused: \(Self.text(error)) (monitoring the system bus needs root: run bluez-record with sudo)")
        }
        dbus_message_unref(reply)
    }

    /// Waits at most `timeoutMilliseconds` for input, then returns the messages received, decoded.
    /// Nil when the bus connection closed.
    func read(timeoutMilliseconds: Int32) -> [Message]? {
        guard dbus_connection_read_write(connection, timeoutMilliseconds) != 0 else { return nil }
        var out: [Message] = []
        while let raw = dbus_connection_pop_message(connection) {
            defer { dbus_message_unref(raw) }
            var buffer: UnsafeMutablePointer<CChar>?
            var length: Int32 = 0
            guard dbus_message_marshal(raw, &buffer, &length) != 0, let buffer else { continue }
            defer { dbus_free(buffer) }
            if let m = DBusFuzzing.decode(messageBytes: UnsafeRawBufferPointer(start: buffer, count: Int(length))) { out.append(m) }
        }
        return out
    }

    /// Closes the connection.
    func close() {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    private static func text(_ error: DBusError) -> String {
        error.message.map { String(cString: $0) } ?? "unknown error"
    }
}
