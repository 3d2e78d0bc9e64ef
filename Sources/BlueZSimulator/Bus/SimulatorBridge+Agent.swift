// SimulatorBridge+Agent: the simulated bluetoothd's calls to registered org.bluez.Agent1 objects.

import DBus

extension SimulatorBridge: AgentBridge {
    func callAgent(owner: String, path: String, _ call: SimulatedAgentCall, timeout: Duration,
                   _ done: @escaping @Sendable (SimulatedAgentAnswer) -> Void) {
        guard let c = connection, let p = try? ObjectPath(path) else { return done(.refused("no bus")) }
        let arguments: [DBusValue]
        switch call {
        case .requestPasskey(let d), .requestAuthorization(let d):
            arguments = [.objectPath((try? ObjectPath(d)) ?? .root)]
        case .displayPasskey(let d, let key, let entered):
            arguments = [.objectPath((try? ObjectPath(d)) ?? .root), .uint32(key), .uint16(entered)]
        case .requestConfirmation(let d, let key):
            arguments = [.objectPath((try? ObjectPath(d)) ?? .root), .uint32(key)]
        }
        c.call(destination: owner, path: p, interface: "org.bluez.Agent1", member: call.member, arguments: arguments,
               timeout: timeout) { result in
            switch result {
            case .success(let m):
                if case .uint32(let key)? = m.body.first { done(.accepted(passkey: key)) } else { done(.accepted(passkey: nil)) }
            case .failure(.timeout): done(.noReply)
            case .failure(.remote(let e)): done(.refused(e.name))
            case .failure(let e): done(.refused("\(e)"))
            }
        }
    }

    func cancelAgent(owner: String, path: String) {
        guard let c = connection, let p = try? ObjectPath(path) else { return }
        c.call(destination: owner, path: p, interface: "org.bluez.Agent1", member: "Cancel", timeout: Self.timeout) { _ in }
    }
}
