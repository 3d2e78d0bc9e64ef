// ForeignConnection: a link BlueZ reports that no manager of this session made.

/// A device BlueZ reports connected (`org.bluez.Device1.Connected` true) that no
/// ``CentralManager`` of the session connected or adopted — another program's link (a
/// `bluetoothctl connect`, an earlier run of this program that died without disconnecting) — or,
/// when ``isPending``, a device whose `Device1.Connect` BlueZ keeps answering with
/// `org.bluez.Error.InProgress` because another client's connection attempt is under way.
///
/// Listed by ``BluetoothSession/foreignConnections(adapter:)`` and
/// ``BluetoothSession/whenForeignConnectionsChange()``; closed with
/// ``BluetoothSession/closeForeignConnection(_:timeout:)``.
///
/// BlueZ does not say which side opened a link: a remote central connected to this machine's
/// ``PeripheralManager`` is listed too (on the peripheral manager's adapter).
public struct ForeignConnection: Sendable, Hashable, CustomStringConvertible {
    /// The device's object path (`/org/bluez/hci0/dev_C0_FF_EE_00_00_01`), the same string as a
    /// ``Peripheral/identifier`` for that device.
    public let identifier: String
    /// `Device1.Address`.
    public let address: String
    /// The adapter's name (`hci0`).
    public let adapter: String
    /// `Device1.Name`, when the device has one.
    public let name: String?
    /// True when the device is not connected yet but our last `Device1.Connect` was answered
    /// `org.bluez.Error.InProgress` with no attempt of ours under way: another client's attempt
    /// holds the device. False for a link that is up (`Device1.Connected` true).
    public let isPending: Bool

    /// A connection with these values (for tests of code that consumes them).
    public init(identifier: String, address: String, adapter: String, name: String? = nil, isPending: Bool = false) {
        self.identifier = identifier
        self.address = address
        self.adapter = adapter
        self.name = name
        self.isPending = isPending
    }

    /// `ForeignConnection(C0:FF:EE:00:00:01 on hci0)`, with `pending` when ``isPending``.
    public var description: String {
        "ForeignConnection(\(address) on \(adapter)\(name.map { " \"\($0)\"" } ?? "")\(isPending ? ", pending" : ""))"
    }
}
