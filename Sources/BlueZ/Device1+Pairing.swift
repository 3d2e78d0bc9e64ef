// org.bluez.Device1: pairing, trust and blocking.
import DBus

extension Device1 {
    /// Calls `org.bluez.Device1.Pair`: connects if needed and runs pairing (SMP on LE). The agent
    /// registered by this connection answers the local side's requests; without one bluetoothd
    /// uses the default agent, or pairs with Just Works.
    public func pair(timeout: Duration = .seconds(60)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "Pair", timeout: timeout)
    }

    /// Calls `org.bluez.Device1.CancelPairing` (the pending `Pair` fails with `AuthenticationCanceled`).
    public func cancelPairing(timeout: Duration = .seconds(10)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "CancelPairing", timeout: timeout)
    }

    /// Sets `Trusted` (`org.freedesktop.DBus.Properties.Set`): a trusted device's service
    /// requests need no authorization from the agent.
    public func setTrusted(_ on: Bool, timeout: Duration = .seconds(5)) async throws(BlueZError) {
        try await setBool("Trusted", on, timeout: timeout)
    }

    /// Sets `Blocked` (`org.freedesktop.DBus.Properties.Set`): a blocked device's connections are
    /// refused; blocking disconnects it.
    public func setBlocked(_ on: Bool, timeout: Duration = .seconds(5)) async throws(BlueZError) {
        try await setBool("Blocked", on, timeout: timeout)
    }

    private func setBool(_ name: String, _ on: Bool, timeout: Duration) async throws(BlueZError) {
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<Void, BlueZError>, Never>) in
            connection.bluezSetProperty(path: path, interface: Self.interface, name: name, value: .bool(on),
                                        timeout: timeout) { c.resume(returning: $0) }
        }
        try result.get()
    }
}

extension Adapter1 {
    /// Calls `org.bluez.Adapter1.RemoveDevice`: disconnects the device and removes its object,
    /// its bond (keys) and its cached GATT database.
    public func removeDevice(_ device: ObjectPath, timeout: Duration = .seconds(10)) async throws(BlueZError) {
        _ = try await connection.bluezCall(path: path, interface: Self.interface, member: "RemoveDevice",
                                           arguments: [.objectPath(device)], timeout: timeout)
    }
}
