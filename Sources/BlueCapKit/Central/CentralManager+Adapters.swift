// CentralManager+Adapters: the adapters on the manager's connection and the adapter it uses.
import BlueZ
import DBus
import Futures

extension CentralManager {
    /// Every adapter bluetoothd knows, once its objects are loaded: ``Adapters/list(timeout:)``
    /// of the manager's session (its object cache; no connection of its own).
    public func adapters(timeout: Duration = .seconds(10)) -> Future<[Adapter]> {
        guard connection != nil else { return Future(error: busUnavailable) }
        return Adapters(session: session, context: context).list(timeout: timeout)
    }

    /// The adapter in use (`hci0`; nil when there is none), then each time it changes. A manager
    /// made with `adapter: nil` moves to the first powered adapter left when the one in use is
    /// removed, and says so here; a manager bound to a name follows that adapter's address (a
    /// USB dongle plugged back may come back as another `hciN`). The latest value is replayed to
    /// a new subscriber.
    public func whenAdapterChanges() -> FutureStream<String?> { adapterStream.stream }

    /// Called when the tracker's chosen adapter changed (owner thread).
    func adapterMoved(to path: ObjectPath?) {
        let name = path.map(Adapter1.name(of:))
        BlueZLog.debug("CentralManager: adapter in use is now \(name ?? "none")")
        adapterStream.success(name)
    }
}
