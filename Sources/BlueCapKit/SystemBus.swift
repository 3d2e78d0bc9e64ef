// SystemBus: the connection a manager uses when the app passes none.
import DBus

/// Opens the system bus for a manager, agent or adapter list created without a connection, and
/// keeps the reason when it cannot be reached (reported by the first operation, not thrown by
/// the initializer).
enum SystemBus {
    /// `connection` when given; otherwise a new system-bus connection, or nil and libdbus's
    /// reason ("Failed to connect to socket /run/dbus/system_bus_socket: …").
    static func resolve(_ connection: Connection?) -> (connection: Connection?, failure: String?) {
        if let connection { return (connection, nil) }
        do { return (try Connection(.system), nil) } catch { return (nil, error.description) }
    }
}
