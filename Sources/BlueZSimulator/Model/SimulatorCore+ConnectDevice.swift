// SimulatorCore+ConnectDevice: Adapter1.ConnectDevice (bluetoothd --experimental): a device connected
// by address, with no discovery, created as bluetoothd's device_connect_cb does.

// MARK: - ConnectDevice

extension SimulatorCore {
    /// `org.bluez.Failed` with no message: what bluetoothd's `device_connect_cb` answers when the
    /// kernel gave up connecting (`g_dbus_send_error(…, "org.bluez.Failed", NULL)`; note the
    /// name, not `org.bluez.Error.Failed`).
    static let connectDeviceFailed = BlueZErrorReply(name: "org.bluez.Failed", message: "")

    /// `Adapter1.ConnectDevice({"Address": s, "AddressType": s})`, as bluetoothd's
    /// `connect_device`: `NotReady` while the adapter is off; `InvalidArguments` for an unknown
    /// key, a malformed or all-zero address, or a type other than "public"/"random"; with
    /// ``BlueZProfile/connectDeviceRejectsExisting`` `AlreadyExists` when a device object for
    /// the address exists. Otherwise the link is made to the peer advertising that address (heard
    /// or not: no discovery is needed), the device object is created (not temporary) and the
    /// reply carries its path once the link is up; services are resolved afterwards, as after
    /// `Device1.Connect`. No connectable peer with that address and type within
    /// ``connectDeviceTimeout``: `org.bluez.Failed` (the kernel's LE connection timeout). Without
    /// `AddressType` bluetoothd connects over BR/EDR, which no simulated peer offers.
    public func connectDevice(adapter index: Int, options: [String: PropertyValue],
                              _ done: @escaping (Result<String, BlueZErrorReply>) -> Void) {
        guard let a = adapters[index] else { return done(.failure(.doesNotExist)) }
        guard a.powered else { return done(.failure(.notReady)) }
        var address: String?
        var addressType = "BR/EDR"
        for (key, value) in options {
            switch (key, value) {
            case ("Address", .string(let s)): address = s
            case ("AddressType", .string(let s)) where s == "public" || s == "random": addressType = s
            default: return done(.failure(.invalidArguments))
            }
        }
        guard let address = address.flatMap(Self.parsedAddress), address != "00:00:00:00:00:00" else {
            return done(.failure(.invalidArguments))
        }
        if profile.connectDeviceRejectsExisting, a.devices[address] != nil { return done(.failure(.alreadyExists)) }
        attemptConnectDevice(a, address: address, addressType: addressType, deadline: clock.now + connectDeviceTimeout, done)
    }

    /// One try at the link; without a peer in range, another when the next one could be heard,
    /// up to `deadline` (the kernel keeps a passive scan for the address while it connects).
    private func attemptConnectDevice(_ a: AdapterState, address: String, addressType: String, deadline: Duration,
                                      _ done: @escaping (Result<String, BlueZErrorReply>) -> Void) {
        guard a.powered else { return done(.failure(Self.connectDeviceFailed)) }
        let peer = peersInRange(of: a).first { peer in
            guard let ad = peer.advertisement else { return false }
            return ad.address == address && ad.addressType == addressType && ad.connectable
        }
        guard let peer, let ad = peer.advertisement else {
            let left = deadline - clock.now
            guard left > .zero else { return done(.failure(Self.connectDeviceFailed)) }
            // The kernel's passive scan for the address: heard in a later scan window, or never.
            let reply = UncheckedBox(done)
            clock.schedule(after: min(left, connectDeviceScanWindow)) { [weak self, weak a] in
                guard let self, let a else { return reply.value(.failure(Self.connectDeviceFailed)) }
                self.attemptConnectDevice(a, address: address, addressType: addressType, deadline: deadline, reply.value)
            }
            return
        }
        let device: DeviceState
        if let existing = a.devices[address] {
            device = existing
        } else {
            device = DeviceState(adapter: a.index, address: address)
            a.devices[address] = device
            store.add(device.path, ["org.bluez.Device1": deviceProperties(device, ad: ad, adapter: a)])
        }
        device.peer = peer
        device.temporaryWork?.cancel()
        connect(device: device.path) { result in
            switch result {
            case .success: done(.success(device.path))
            case .failure: done(.failure(Self.connectDeviceFailed))
            }
        }
    }

    /// `XX:XX:XX:XX:XX:XX` (hex digits, any case) in upper case, as bluetoothd's `str2ba`
    /// accepts it; nil otherwise.
    static func parsedAddress(_ text: String) -> String? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return text.uppercased()
    }
}
