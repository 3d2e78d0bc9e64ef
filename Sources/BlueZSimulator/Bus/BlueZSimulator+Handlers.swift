// BlueZSimulator+Handlers: each BlueZ method call turned into a model operation and a reply.

import DBus

// MARK: - Handlers

extension BlueZSimulator {
    /// Handles one call on the simulator's queue; the reply is sent when the model decides.
    func handle(_ interface: String, _ member: String, _ path: String, _ call: MethodCall, _ responder: Responder) {
        let sender = call.sender ?? ""
        func reply(_ r: Result<Void, BlueZErrorReply>) {
            switch r {
            case .success: responder.succeed()
            case .failure(let e): responder.fail(name: e.name, message: e.message)
            }
        }
        func run(_ body: () throws(BlueZErrorReply) -> Void) {
            do throws(BlueZErrorReply) { try body(); responder.succeed() } catch { responder.fail(name: error.name, message: error.message) }
        }
        let adapter = core.adapterIndexes.first { BlueZPath.adapter($0) == path }
        switch (interface, member) {
        case ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"):
            responder.succeed([managedObjects()])

        // Adapter1
        case ("org.bluez.Adapter1", "StartDiscovery"):
            run { () throws(BlueZErrorReply) in try core.startDiscovery(adapter: adapter ?? -1, sender: sender) }
        case ("org.bluez.Adapter1", "StopDiscovery"):
            run { () throws(BlueZErrorReply) in try core.stopDiscovery(adapter: adapter ?? -1, sender: sender) }
        case ("org.bluez.Adapter1", "SetDiscoveryFilter"):
            run { () throws(BlueZErrorReply) in
                guard let dict = optionsDictionary(call.body.first) else { throw .invalidArguments }
                try core.setDiscoveryFilter(adapter: adapter ?? -1, sender: sender, filter: try DiscoveryFilter.parse(dict))
            }
        case ("org.bluez.Adapter1", "GetDiscoveryFilters"):
            responder.succeed([.array(element: .string, DiscoveryFilter.supportedKeys.map { .string($0) })])
        case ("org.bluez.Adapter1", "RemoveDevice"):
            run { () throws(BlueZErrorReply) in
                guard case .objectPath(let p)? = call.body.first else { throw .invalidArguments }
                try core.removeDevice(adapter: adapter ?? -1, path: p.rawValue)
            }
        case ("org.bluez.Adapter1", "ConnectDevice"):
            guard let index = adapter, let dict = optionsDictionary(call.body.first) else { return reply(.failure(.invalidArguments)) }
            let options = dict.compactMapValues { PropertyValue($0) }
            guard options.count == dict.count else { return reply(.failure(.invalidArguments)) }
            core.connectDevice(adapter: index, options: options) { result in
                switch result {
                case .success(let device):
                    guard let path = try? ObjectPath(device) else { return responder.fail(name: "org.bluez.Failed", message: "") }
                    responder.succeed([.objectPath(path)])
                case .failure(let e): responder.fail(name: e.name, message: e.message)
                }
            }

        // Device1
        case ("org.bluez.Device1", "Connect"):
            core.connect(device: path, reply)
        case ("org.bluez.Device1", "Disconnect"):
            core.disconnect(device: path, reply)
        case ("org.bluez.Device1", "Pair"):
            core.pair(device: path, sender: sender, reply)
        case ("org.bluez.Device1", "CancelPairing"):
            run { () throws(BlueZErrorReply) in try core.cancelPairing(device: path) }
        case ("org.bluez.Device1", "ConnectProfile"), ("org.bluez.Device1", "DisconnectProfile"):
            reply(.failure(.notSupported))

        // GATT
        case ("org.bluez.GattCharacteristic1", "ReadValue"), ("org.bluez.GattDescriptor1", "ReadValue"):
            do throws(BlueZErrorReply) {
                let options = try SimulatorCore.ValueOptions.parse(call.body.first)
                core.readValue(path: path, options: options) { r in
                    switch r {
                    case .success(let b): responder.succeed([.array(element: .byte, b.map { .byte($0) })])
                    case .failure(let e): responder.fail(name: e.name, message: e.message)
                    }
                }
            } catch { responder.fail(name: error.name, message: error.message) }
        case ("org.bluez.GattCharacteristic1", "WriteValue"), ("org.bluez.GattDescriptor1", "WriteValue"):
            do throws(BlueZErrorReply) {
                guard let value = bytes(call.body.first) else { throw .invalidArguments }
                let options = try SimulatorCore.ValueOptions.parse(call.body.count > 1 ? call.body[1] : nil)
                core.writeValue(path: path, value: value, options: options, reply)
            } catch { responder.fail(name: error.name, message: error.message) }
        case ("org.bluez.GattCharacteristic1", "StartNotify"):
            run { () throws(BlueZErrorReply) in try core.startNotify(path: path, sender: sender) }
        case ("org.bluez.GattCharacteristic1", "StopNotify"):
            run { () throws(BlueZErrorReply) in try core.stopNotify(path: path, sender: sender) }
        case ("org.bluez.GattCharacteristic1", "AcquireNotify"), ("org.bluez.GattCharacteristic1", "AcquireWrite"):
            do throws(BlueZErrorReply) {
                let (fd, mtu) = member == "AcquireNotify"
                    ? try core.acquireNotify(path: path, sender: sender) : try core.acquireWrite(path: path, sender: sender)
                let owned = FileDescriptor(taking: fd)  // the reply carries a duplicate; ours closes here
                responder.succeed([.unixFD(owned), .uint16(mtu)])
            } catch { responder.fail(name: error.name, message: error.message) }

        // Peripheral role
        case ("org.bluez.GattManager1", "RegisterApplication"):
            guard case .objectPath(let root)? = call.body.first, let index = adapter else { return reply(.failure(.invalidArguments)) }
            registerApplication(adapter: index, owner: sender, root: root, responder)
        case ("org.bluez.GattManager1", "UnregisterApplication"):
            run { () throws(BlueZErrorReply) in
                guard case .objectPath(let root)? = call.body.first else { throw .invalidArguments }
                try core.unregisterApplication(adapter: adapter ?? -1, owner: sender, root: root.rawValue)
                if !core.hasRegistrations(owner: sender) { appSignals.removeValue(forKey: sender)?.cancel() }
            }
        case ("org.bluez.LEAdvertisingManager1", "RegisterAdvertisement"):
            guard case .objectPath(let p)? = call.body.first, let index = adapter else { return reply(.failure(.invalidArguments)) }
            registerAdvertisement(adapter: index, owner: sender, path: p, responder)
        case ("org.bluez.LEAdvertisingManager1", "UnregisterAdvertisement"):
            run { () throws(BlueZErrorReply) in
                guard case .objectPath(let p)? = call.body.first else { throw .invalidArguments }
                try core.unregisterAdvertisement(adapter: adapter ?? -1, owner: sender, path: p.rawValue, release: false)
            }

        // Advertisement monitors (experimental)
        case ("org.bluez.AdvertisementMonitorManager1", "RegisterMonitor"):
            guard case .objectPath(let root)? = call.body.first, let index = adapter else { return reply(.failure(.invalidArguments)) }
            registerMonitor(adapter: index, owner: sender, root: root, responder)
        case ("org.bluez.AdvertisementMonitorManager1", "UnregisterMonitor"):
            run { () throws(BlueZErrorReply) in
                guard case .objectPath(let root)? = call.body.first else { throw .invalidArguments }
                try core.unregisterMonitor(adapter: adapter ?? -1, owner: sender, root: root.rawValue)
            }

        // Agents (SimulatorCore+Pairing).
        case ("org.bluez.AgentManager1", "RegisterAgent"):
            run { () throws(BlueZErrorReply) in
                guard call.body.count == 2, case .objectPath(let p) = call.body[0], case .string(let cap) = call.body[1] else {
                    throw .invalidArguments
                }
                try core.registerAgent(owner: sender, path: p.rawValue, capability: cap)
            }
        case ("org.bluez.AgentManager1", "UnregisterAgent"), ("org.bluez.AgentManager1", "RequestDefaultAgent"):
            run { () throws(BlueZErrorReply) in
                guard case .objectPath(let p)? = call.body.first else { throw .invalidArguments }
                if member == "UnregisterAgent" {
                    try core.unregisterAgent(owner: sender, path: p.rawValue)
                } else {
                    try core.requestDefaultAgent(owner: sender, path: p.rawValue)
                }
            }

        // Accepted minimally.
        case ("org.bluez.ProfileManager1", _):
            responder.succeed()

        default:
            let e = BlueZErrorReply.unknownMethod(interface, member)
            responder.fail(name: e.name, message: e.message)
        }
    }
}
