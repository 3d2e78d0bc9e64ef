// BlueZReplayer+Restart: a recorded restart of bluetoothd, played as one.
import DBus

// MARK: - Restart

extension BlueZReplayer {
    /// bluetoothd went away (on `queue`): the name is released and the connection closes, so the bus sends
    /// `NameOwnerChanged` to "" and fails the app's calls still waiting with `NoReply`, as it did
    /// for the recorded bluetoothd; the objects go with it.
    ///
    /// The name is released (and the bus's answer awaited) before the connection closes:
    /// closing our descriptor ends the connection only when no other copy of it is open, and a
    /// process forked in the meantime (a test spawning a helper: fork, then exec) holds a copy
    /// until it execs. The bus would still count the old connection as the owner when the
    /// recorded restart's new one asks for the name, and refuse it. The app sees the same
    /// `NameOwnerChanged`.
    func bluetoothdExits() {
        for h in handles.values { h.unexport() }
        handles.removeAll()
        held.removeAll()
        deferred.removeAll()
        tree.removeAll()
        do {
            _ = try Self.busCall("ReleaseName", [.string(BlueZSimulator.busName)], on: connection)
        } catch {
            state.withLock { $0.record("replay could not release \(BlueZSimulator.busName) for the recorded restart: \(error)") }
        }
        connection.close()
    }

    /// bluetoothd is back (on `queue`, recorded event `index`): a new connection takes
    /// `org.bluez`. Its objects are those of the app's first `GetManagedObjects` recorded after
    /// this (bluetoothd publishes its objects as it sets them up, and a recording may hold no
    /// signal for those published before the app asked), less those whose `InterfacesAdded` was
    /// recorded before that reply came: they appear when their signal is replayed. The recorded
    /// signals keep the tree current. A failure is kept in the report.
    func bluetoothdStarts(after index: Int) {
        tree = Self.treeAfterRestart(scenario.events, at: index)
        do {
            let fresh = try Connection(address: busAddress)
            connection.close()
            connection = fresh
            exportAll()
            let reply = try Self.busCall("RequestName", [.string(BlueZSimulator.busName), .uint32(4)], on: fresh)
            // 1: primary owner (DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER).
            guard reply.body.first == .uint32(1) else {
                state.withLock { $0.record("replay could not take \(BlueZSimulator.busName) again after the recorded restart: RequestName replied \(reply.body)") }
                return
            }
        } catch {
            state.withLock { $0.record("replay could not start bluetoothd again after the recorded restart: \(error)") }
        }
    }

    /// Calls the bus daemon's `member` on `connection` and waits for the answer (at most 5 s;
    /// on `queue`, never the connection's own thread).
    private static func busCall(_ member: String, _ arguments: [DBusValue], on connection: Connection) throws(DBusCallError) -> Message {
        try connection.callBlocking(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                    interface: "org.freedesktop.DBus", member: member, arguments: arguments, timeout: .seconds(5))
    }

    /// The objects bluetoothd had right after the restart recorded at `index` (see
    /// ``bluetoothdStarts(after:)``).
    static func treeAfterRestart(_ events: [ScenarioEvent], at index: Int) -> [String: [String: [String: DBusValue]]] {
        guard let (g, objects) = events.indices.dropFirst(index + 1).lazy.compactMap({ i -> (Int, [String: [String: [String: DBusValue]]])? in
            guard case .call(_, let m, .reply(let values), _) = events[i], m.member == "GetManagedObjects",
                  m.interface == "org.freedesktop.DBus.ObjectManager",
                  let objects = BlueZScenario.objects(fromManagedObjects: values.first) else { return nil }
            return (i, objects)
        }).first, case .call(let at, _, _, let latency) = events[g] else { return [:] }
        var tree = objects
        for event in events[(index + 1)...] where event.at < at + latency {
            guard case .signal(_, let m) = event, m.member == "InterfacesAdded", m.arguments.count == 2,
                  case .objectPath(let path) = m.arguments[0], case .dict(_, _, let entries) = m.arguments[1] else { continue }
            for case .string(let name) in entries.map(\.key) { tree[path.rawValue]?[name] = nil }
            if tree[path.rawValue]?.isEmpty == true { tree[path.rawValue] = nil }
        }
        return tree
    }
}
