// Calls to org.bluez with explicit timeouts, failures mapped to BlueZError.
import DBus

/// The well-known bus name of bluetoothd.
public let bluezBusName = "org.bluez"

extension Connection {
    /// Calls `interface.member` on `path` at `org.bluez`; failures become a ``BlueZError`` naming
    /// the operation (`interface.member`) and the path. `completion` runs on the connection's
    /// owner thread.
    public func bluezCall(
        path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration, completion: @escaping @Sendable (Result<Message, BlueZError>) -> Void
    ) {
        let operation = interface + "." + member
        call(destination: bluezBusName, path: path, interface: interface, member: member,
             arguments: arguments, timeout: timeout) { result in
            completion(result.mapError { BlueZError($0, operation: operation, path: path.rawValue) })
        }
    }

    /// Async form of ``bluezCall(path:interface:member:arguments:timeout:completion:)``.
    public func bluezCall(
        path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [], timeout: Duration
    ) async throws(BlueZError) -> Message {
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<Message, BlueZError>, Never>) in
            bluezCall(path: path, interface: interface, member: member, arguments: arguments, timeout: timeout) {
                c.resume(returning: $0)
            }
        }
        return try result.get()
    }

    /// Sets a property with `org.freedesktop.DBus.Properties.Set` on `org.bluez`.
    public func bluezSetProperty(
        path: ObjectPath, interface: String, name: String, value: DBusValue, timeout: Duration,
        completion: @escaping @Sendable (Result<Void, BlueZError>) -> Void
    ) {
        call(destination: bluezBusName, path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
             arguments: [.string(interface), .string(name), .variant(value)], timeout: timeout) { result in
            completion(result.map { _ in () }.mapError {
                BlueZError($0, operation: "\(interface).\(name) (Properties.Set)", path: path.rawValue)
            })
        }
    }
}

extension Result where Success == Message, Failure == BlueZError {
    /// Drops the reply body.
    var void: Result<Void, BlueZError> { map { _ in () } }
}
