// BluetoothSession: the links BlueZ reports that no manager of this session made, and closing them.
import BlueZ
import DBus
import Foundation
import Futures

extension BluetoothSession {
    // MARK: - Listing

    /// The devices BlueZ reports connected (`org.bluez.Device1.Connected` true) that no
    /// ``CentralManager`` of this session connected or adopted, plus the devices another
    /// client's pending attempt holds (``ForeignConnection/isPending``), on `adapter` (`"hci0"`;
    /// nil: every adapter), sorted by identifier.
    ///
    /// "Ours" is exact: a peripheral of one of the session's central managers whose
    /// ``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)`` is
    /// connecting, connected or disconnecting, or whose `Device1.Disconnect` is still on its
    /// way, is never listed. A link another program made is listed until a manager adopts it by
    /// calling `connect(...)` on its ``Peripheral``.
    ///
    /// Asks bluetoothd (`org.freedesktop.DBus.ObjectManager.GetManagedObjects`) rather than
    /// trusting the signals alone: bluetoothd can bring a link up without emitting
    /// `Connected = true` (when the ATT channel comes up before the kernel's Device Connected
    /// event). Completes with an empty list when the bus cannot be reached.
    public func foreignConnections(adapter: String? = nil) -> Future<[ForeignConnection]> {
        guard tree != nil else { return Future(value: []) }
        let promise = Promise<[ForeignConnection]>()
        refreshForeignLinks { [weak self] in
            self?.foreignLinksMayHaveChanged()
            let list = self?.currentForeignConnections() ?? []
            promise.success(adapter.map { name in list.filter { $0.adapter == name } } ?? list)
        }
        return promise.future
    }

    /// The foreign connections of ``foreignConnections(adapter:)`` (every adapter): the list
    /// as it is when the stream is made (read from bluetoothd, so a program sees the links left
    /// from before it started), then the whole list again each time it changes (a
    /// device connected or disconnected by another program, an attempt of ours that met
    /// `InProgress`, a manager adopting or releasing a link). A link bluetoothd brought up
    /// without a `Connected = true` signal joins the list at the next read from bluetoothd
    /// (``foreignConnections(adapter:)``, or a `connect` meeting `InProgress`).
    ///
    /// Capacity 1: the stream keeps only the latest list; a subscriber that falls behind
    /// skips to it, and a new subscriber gets it first. All calls return the same stream; it
    /// finishes when the session closes.
    public func whenForeignConnectionsChange() -> FutureStream<[ForeignConnection]> {
        let (stream, isNew) = foreignWatch.stream { [weak self] in
            self?.tree?.observe { [weak self] event in self?.treeEventForForeignLinks(event) }
        }
        if isNew, tree != nil { refreshForeignLinks { [weak self] in self?.foreignLinksMayHaveChanged() } }
        if isNew, tree == nil { foreignWatch.recompute { [] } }
        return stream
    }

    // MARK: - Closing

    /// Takes down a foreign connection: calls `org.bluez.Device1.Disconnect` on the device
    /// (which also cancels another client's pending `Connect`) and completes when BlueZ has
    /// answered, within `timeout`.
    ///
    /// Fails with `.invalidArguments` when the device's link belongs to a ``CentralManager`` of
    /// this session now (use ``Peripheral/disconnect()``), `.timeout` after `timeout`, or
    /// BlueZ's error (`.doesNotExist` when the device object is gone).
    public func closeForeignConnection(_ foreign: ForeignConnection, timeout: Duration = .seconds(5)) -> Future<Void> {
        let operation = "BluetoothSession.closeForeignConnection (org.bluez.Device1.Disconnect)"
        guard let connection, isOpen else {
            return Future(error: BlueCapError(kind: .busUnavailable, operation: operation,
                                              message: unavailableReason ?? "no D-Bus connection"))
        }
        guard let path = try? ObjectPath(foreign.identifier) else {
            return Future(error: BlueCapError(kind: .invalidArguments, operation: operation, path: foreign.identifier,
                                              message: "not a device object path"))
        }
        if claimsLink(path, pending: foreign.isPending) {
            return Future(error: BlueCapError(kind: .invalidArguments, operation: operation, path: foreign.identifier,
                                              message: "the link belongs to a CentralManager of this session: call Peripheral.disconnect()"))
        }
        let promise = Promise<Void>()
        let context = self.context
        Device1(connection: connection, path: path).disconnect(timeout: timeout) { [weak self] result in
            switch result {
            case .success:
                self?.foreignWatch.setPending(path, false)
                self?.foreignLinksMayHaveChanged()
                context.execute { promise.success(()) }
            case .failure(let error):
                let failure = BlueCapError(error, operation: operation, path: foreign.identifier, timeout: timeout)
                context.execute { promise.failure(failure) }
            }
        }
        return promise.future
    }

    // MARK: - Bookkeeping

    /// A connection event of a peripheral of ours, or a Connect answered `InProgress`: the
    /// list may have changed (a no-op unless a stream is open).
    func foreignLinksMayHaveChanged() {
        guard foreignWatch.isWatching else { return }
        foreignWatch.recompute { [weak self] in self?.currentForeignConnections() ?? [] }
    }

    /// Whether a central manager of this session holds the link to `path` (for a `pending`
    /// record: whether an attempt of ours is under way).
    func claimsLink(_ path: ObjectPath, pending: Bool) -> Bool {
        foreignWatch.isClosing(path) || members.contains { ($0 as? CentralManager)?.claimsLink(path, pending: pending) == true }
    }

    /// Reads bluetoothd's objects afresh and records the links it has up without having
    /// signalled them; then `done` (after catching up with the bus when the read failed).
    func refreshForeignLinks(_ done: @escaping @Sendable () -> Void) {
        guard let tree else { return done() }
        tree.fetchObjects(timeout: .seconds(10)) { [weak self] result in
            guard let self else { return done() }
            guard case .success(let objects) = result else { return tree.synchronize(done) }
            let up = objects.compactMap { path, ifaces in ifaces[Device1.interface]?["Connected"] == .bool(true) ? path : nil }
            let cached = Set(tree.connectedDevices())
            self.foreignWatch.setUnsignalled(Set(up).subtracting(cached))
            // The cache catches up with signals sent before the reply before the list is made.
            tree.synchronize(done)
        }
    }

    /// The list now, from the object cache (with the links bluetoothd did not signal) and the
    /// managers' connection states.
    private func currentForeignConnections() -> [ForeignConnection] {
        guard let tree else { return [] }
        let devices = tree.paths(withInterface: Device1.interface)
        let known = Set(devices)
        let connected = Set(tree.connectedDevices()).union(foreignWatch.unsignalledLinks.filter(known.contains))
        foreignWatch.prunePending { known.contains($0) && !connected.contains($0) }
        let pending = foreignWatch.pendingPaths
        let centrals = members.compactMap { $0 as? CentralManager }
        return (connected.union(pending)).sorted { $0.rawValue < $1.rawValue }.compactMap { path in
            let isPending = !connected.contains(path)
            guard !foreignWatch.isClosing(path), !centrals.contains(where: { $0.claimsLink(path, pending: isPending) }) else { return nil }
            let props = Device1.Properties(tree.properties(at: path, interface: Device1.interface) ?? [:], path: path)
            let adapter = props.adapter ?? path.deviceAdapter ?? path
            return ForeignConnection(identifier: path.rawValue, address: props.address ?? Peripheral.address(from: path),
                                     adapter: Adapter1.name(of: adapter), name: props.name,
                                     isPending: isPending)
        }
    }

    /// A tree event: Connected changes and devices coming and going may change the list.
    private func treeEventForForeignLinks(_ event: ObjectTreeEvent) {
        switch event {
        case .propertiesChanged(let path, let interface, let changed, _) where interface == Device1.interface && changed["Connected"] != nil:
            foreignWatch.signalled(path)
            foreignLinksMayHaveChanged()
        case .interfacesAdded(_, let ifaces) where ifaces[Device1.interface] != nil:
            foreignLinksMayHaveChanged()
        case .interfacesRemoved(let path, let names) where names.contains(Device1.interface):
            foreignWatch.signalled(path)
            foreignLinksMayHaveChanged()
        case .loaded, .ownerChanged:
            foreignLinksMayHaveChanged()
        default:
            break
        }
    }
}
