// Adapter1+ConnectDevice: connecting a device by address without a discovery (experimental in BlueZ).
import DBus

extension Adapter1 {
    /// Calls `org.bluez.Adapter1.ConnectDevice` with `{"Address": address, "AddressType":
    /// addressType}` ("public" or "random"): bluetoothd connects the LE device without a
    /// discovery and answers with the device's object path once the link is up (service
    /// discovery goes on afterwards).
    ///
    /// The method exists only when bluetoothd runs with `--experimental` (`-E`, or
    /// `Experimental = true` in `main.conf`); otherwise the call fails with
    /// `org.freedesktop.DBus.Error.UnknownMethod`. bluetoothd answers `NotReady` while the
    /// adapter is off, `InvalidArguments` for a malformed address or type, `AlreadyExists`
    /// (5.68 and earlier) when a device object for the address exists, and `org.bluez.Failed` when
    /// the kernel gave up connecting (the device was not heard).
    public func connectDevice(address: String, addressType: String, timeout: Duration,
                              completion: @escaping @Sendable (Result<ObjectPath, BlueZError>) -> Void) {
        let properties: DBusValue = .properties(["Address": .string(address), "AddressType": .string(addressType)])
        connection.bluezCall(path: path, interface: Self.interface, member: "ConnectDevice",
                             arguments: [properties], timeout: timeout) { [path] result in
            completion(result.flatMap { message in
                guard case .objectPath(let device)? = message.body.first else {
                    return .failure(BlueZError(kind: .invalidReply, message: "ConnectDevice answered without an object path",
                                               operation: "org.bluez.Adapter1.ConnectDevice", path: path.rawValue))
                }
                return .success(device)
            })
        }
    }
}
