// BlueZReplayer+Restart: a recorded restart of bluetoothd, played as one.
import DBus

// MARK: - Restart

extension BlueZReplayer {
    /// bluetoothd went away (on `queue`): the connection closes, so the bus sends
    /// `NameOwnerChanged` to "" and fails the app's calls still waiting with `NoReply`, as it did
    /// for the recorded bluetoothd; the objects go with it.
    func bluetoothdExits() {
        for h in handles.values { h.unexport() }
        handles.removeAll()
        held.removeAll()
        deferred.removeAll()
        tree.removeAll()
        connection.close()
    }

    /// bluetoothd is back (on `queue`, recorded event `index`): a new connection takes
    /// `org.bluez`. Its objects are those of the app's first `GetManagedObjects` recorded after
    /// this (bluetoothd publishes its adapters as it finds them, and a recording may hold no
    /// signal for those published before the app asked); the recorded signals that follow keep
    /// them current. A failure is kept in the report.
    func bluetoothdStarts(after index: Int) {
        let events = scenario.events
        tree = events[(index + 1)...].lazy.compactMap { event -> [String: [String: [String: DBusValue]]]? in
            guard case .call(_, let m, .reply(let values), _) = event, m.member == "GetManagedObjects",
                  m.interface == "org.freedesktop.DBus.ObjectManager" else { return nil }
            return BlueZScenario.objects(fromManagedObjects: values.first)
        }.first ?? [:]
        do {
            let fresh = try Connection(address: busAddress)
            connection.close()
            connection = fresh
            exportAll()
            let reply = try fresh.callBlocking(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                               interface: "org.freedesktop.DBus", member: "RequestName",
                                               arguments: [.string(BlueZSimulator.busName), .uint32(4)], timeout: .seconds(5))
            // 1: primary owner (DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER).
            guard reply.body.first == .uint32(1) else {
                state.withLock { $0.record("replay could not take \(BlueZSimulator.busName) again after the recorded restart: RequestName replied \(reply.body)") }
                return
            }
        } catch {
            state.withLock { $0.record("replay could not start bluetoothd again after the recorded restart: \(error)") }
        }
    }
}
