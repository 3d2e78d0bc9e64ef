// ObjectTree: bluetoothd's objects read afresh, for answers the signals may not have given.
import DBus

extension ObjectTree {
    /// Calls `org.freedesktop.DBus.ObjectManager.GetManagedObjects` on bluetoothd and hands
    /// back its objects as they are now, leaving the cache as it is. For state bluetoothd may
    /// change without a signal: with the ATT channel up before mgmt's Device Connected event,
    /// bluetoothd 5.66 reports `Device1.Connected` true to a `Get` but never emits
    /// `Connected = true` (Scripts/bluez-vm/README.md, lesson 11).
    public func fetchObjects(timeout: Duration,
                             _ done: @escaping @Sendable (Result<[ObjectPath: InterfaceProperties], BlueZError>) -> Void) {
        connection.bluezCall(path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects",
                             timeout: timeout) { result in
            switch result {
            case .failure(let error):
                done(.failure(error))
            case .success(let reply):
                var objects: [ObjectPath: InterfaceProperties] = [:]
                if case .dict(_, _, let entries)? = reply.body.first {
                    for e in entries {
                        guard case .objectPath(let path) = e.key, let ifaces = Self.interfaceMap(e.value) else { continue }
                        objects[path] = ifaces
                    }
                }
                done(.success(objects))
            }
        }
    }
}
