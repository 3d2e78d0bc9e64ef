// BlueZSimulator: other programs' connections and services changing while connected.

extension BlueZSimulator {
    /// Another program connects the device at `path` (`/org/bluez/hci0/dev_…`): `Connected`
    /// turns true with no `Device1.Connect` from the bus clients under test. While the
    /// peripheral's `connectionDelay` runs, the attempt is pending and any `Device1.Connect` is
    /// answered `org.bluez.Error.InProgress`. Returns BlueZ's error for that program's attempt
    /// when it failed at once (no such device: `DoesNotExist`; adapter off: `NotReady`), else nil.
    @discardableResult
    public func connectAsOtherClient(device path: String) -> BlueZErrorReply? {
        sync { $0.connectAsOtherClient(device: path) }
    }

    /// The peripheral at `address` changes its GATT database to `spec`'s services while
    /// connected; connected devices show it as `style` says (by default as bluetoothd shows a
    /// Service Changed indication: the changed services' objects removed at once, the new ones
    /// added ``serviceRediscoveryDelay`` later, `ServicesResolved` staying true).
    public func changeServicesWhileConnected(peripheral address: String, to spec: SimulatedPeripheral,
                                             style: ServicesChangeStyle = .serviceChangedIndication) {
        sync { $0.changeServicesWhileConnected(address.uppercased(), spec.services, style: style) }
    }

    /// How long after a Service Changed indication (``changeServicesWhileConnected(peripheral:to:style:)``)
    /// the new services' objects appear, the changed ones having gone at once (default 200 ms, on
    /// the simulator's clock; zero: in the same moment). bluetoothd reads the changed range from
    /// the device again in between, so a client sees the removal and the addition apart, as the
    /// third-party tier saw bluetoothd 5.66 and 5.82 do against a Bumble peer.
    public var serviceRediscoveryDelay: Duration {
        get { sync { $0.serviceRediscoveryDelay } }
        set { sync { $0.serviceRediscoveryDelay = newValue } }
    }
}
