// ObjectTree+Devices: finding device objects by the address bluetoothd states for them.
import DBus

extension ObjectTree {
    // MARK: - Devices by address

    /// The `org.bluez.Device1` objects whose `Address` is `address` (any case), below `adapter`
    /// when given; those whose `AddressType` is `addressType` ("public" or "random") first, then
    /// by path. Matches the property, never the address in the object path: once a peer that uses
    /// privacy has bonded, bluetoothd states its identity address while the path keeps the
    /// private address it was found at.
    public func devicePaths(withAddress address: String, addressType: String? = nil, under adapter: ObjectPath? = nil) -> [ObjectPath] {
        let wanted = address.uppercased()
        var found: [(path: ObjectPath, typeMatches: Bool)] = []
        for path in paths(withInterface: Device1.interface, under: adapter) {
            guard let props = properties(at: path, interface: Device1.interface),
                  case .string(let a)? = props["Address"], a.uppercased() == wanted else { continue }
            var typeMatches = false
            if let addressType, case .string(let t)? = props["AddressType"] { typeMatches = t == addressType }
            found.append((path, typeMatches))
        }
        // stable: `paths` is sorted
        return found.filter(\.typeMatches).map(\.path) + found.filter { !$0.typeMatches }.map(\.path)
    }

    /// `Device1.Address` of the device object at `path`, uppercased; nil when the tree has no such
    /// object or it states none.
    public func deviceAddress(at path: ObjectPath) -> String? {
        guard case .string(let a)? = properties(at: path, interface: Device1.interface)?["Address"] else { return nil }
        return a.uppercased()
    }
}
