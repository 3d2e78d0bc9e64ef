// SimulatorBridge: calls from the simulated bluetoothd to registered applications and
// advertisements, made from the connection that owns `org.bluez` (as bluetoothd does).

import DBus
import Glibc

// MARK: - SimulatorBridge

/// The `ApplicationBridge` over D-Bus. Its methods are called on the simulator's queue.
final class SimulatorBridge: ApplicationBridge, @unchecked Sendable {
    // `@unchecked Sendable`: `simulator` is only read on the simulator's queue.
    private weak var simulator: BlueZSimulator?
    /// How long the simulator waits for an application's answer.
    static let timeout: Duration = .seconds(10)

    init(simulator: BlueZSimulator) { self.simulator = simulator }

    /// The connection that owns `org.bluez` (read on the simulator's queue).
    var connection: Connection? { simulator?.connection }

    private func options(_ o: ServerRequestOptions) -> DBusValue {
        var d: [String: DBusValue] = [
            "device": .objectPath((try? ObjectPath(o.device)) ?? .root), "link": .string(o.link), "mtu": .uint16(o.mtu),
        ]
        if o.offset != 0 { d["offset"] = .uint16(o.offset) }
        if let t = o.type { d["type"] = .string(t) }
        return .properties(d)
    }

    private static func reply(_ error: DBusCallError) -> BlueZErrorReply {
        switch error {
        case .remote(let e): BlueZErrorReply(name: e.name, message: e.message)
        default: .failed("\(error)")
        }
    }

    func readValue(owner: String, path: String, interface: String, options o: ServerRequestOptions,
                   _ done: @escaping @Sendable (Result<[UInt8], BlueZErrorReply>) -> Void) {
        guard let c = simulator?.connection, let p = try? ObjectPath(path) else { return done(.failure(.failed("no bus"))) }
        c.call(destination: owner, path: p, interface: interface, member: "ReadValue", arguments: [options(o)],
               timeout: Self.timeout) { result in
            switch result {
            case .success(let m):
                guard let b = bytes(m.body.first) else { return done(.failure(.failed("ReadValue replied \(m.signature)"))) }
                done(.success(b))
            case .failure(let e): done(.failure(Self.reply(e)))
            }
        }
    }

    func writeValue(owner: String, path: String, interface: String, value: [UInt8], options o: ServerRequestOptions,
                    _ done: @escaping @Sendable (Result<Void, BlueZErrorReply>) -> Void) {
        guard let c = simulator?.connection, let p = try? ObjectPath(path) else { return done(.failure(.failed("no bus"))) }
        c.call(destination: owner, path: p, interface: interface, member: "WriteValue",
               arguments: [.array(element: .byte, value.map { .byte($0) }), options(o)], timeout: Self.timeout) { result in
            done(result.map { _ in () }.mapError(Self.reply))
        }
    }

    func setNotifying(owner: String, path: String, enabled: Bool) {
        guard let c = simulator?.connection, let p = try? ObjectPath(path) else { return }
        c.call(destination: owner, path: p, interface: "org.bluez.GattCharacteristic1",
               member: enabled ? "StartNotify" : "StopNotify", timeout: Self.timeout) { _ in }
    }

    func acquireNotify(owner: String, path: String, options o: ServerRequestOptions,
                       _ done: @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void) {
        acquire("AcquireNotify", owner: owner, path: path, options: o, done)
    }

    func acquireWrite(owner: String, path: String, options o: ServerRequestOptions,
                      _ done: @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void) {
        acquire("AcquireWrite", owner: owner, path: path, options: o, done)
    }

    /// `AcquireNotify` or `AcquireWrite`: the reply's descriptor, duplicated (the message's own
    /// closes with it).
    private func acquire(_ member: String, owner: String, path: String, options o: ServerRequestOptions,
                         _ done: @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void) {
        guard let c = simulator?.connection, let p = try? ObjectPath(path) else { return done(.failure(.failed("no bus"))) }
        c.call(destination: owner, path: p, interface: "org.bluez.GattCharacteristic1", member: member,
               arguments: [options(o)], timeout: Self.timeout) { result in
            switch result {
            case .success(let m):
                guard case .unixFD(let fd)? = m.body.first?.unwrapped else {
                    return done(.failure(.failed("\(member) replied \(m.signature)")))
                }
                let kept = fcntl(fd.rawValue, F_DUPFD_CLOEXEC, 0)
                guard kept >= 0 else { return done(.failure(.failed("dup: errno \(errno)"))) }
                done(.success(kept))
            case .failure(let e): done(.failure(Self.reply(e)))
            }
        }
    }

    func releaseAdvertisement(owner: String, path: String) {
        guard let c = simulator?.connection, let p = try? ObjectPath(path) else { return }
        c.call(destination: owner, path: p, interface: "org.bluez.LEAdvertisement1", member: "Release", timeout: Self.timeout) { _ in }
    }
}

// MARK: - Registration

extension BlueZSimulator {
    /// Reads the application's tree (GetManagedObjects on `root`), registers it, watches its
    /// characteristics' Value changes, then replies.
    func registerApplication(adapter: Int, owner: String, root: ObjectPath, _ responder: Responder) {
        connection.call(destination: owner, path: root, interface: "org.freedesktop.DBus.ObjectManager",
                        member: "GetManagedObjects", timeout: SimulatorBridge.timeout) { [weak self] result in
            guard let self else { return }
            self.queue.async {
                guard case .success(let m) = result, let app = Self.parseApplication(m.body.first, owner: owner, root: root) else {
                    return responder.fail(name: "org.bluez.Error.InvalidArguments", message: "No object received")
                }
                do throws(BlueZErrorReply) {
                    try self.core.registerApplication(adapter: adapter, app)
                    self.watchApplication(owner)
                    responder.succeed()
                } catch { responder.fail(name: error.name, message: error.message) }
            }
        }
    }

    private func watchApplication(_ owner: String) {
        guard appSignals[owner] == nil else { return }
        let rule = MatchRule(sender: owner, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                             arg0: "org.bluez.GattCharacteristic1")
        appSignals[owner] = connection.subscribe(rule: rule) { [weak self] m in
            guard let path = m.path?.rawValue, m.body.count >= 2, let changed = optionsDictionary(m.body[1]),
                  let value = bytes(changed["Value"]) else { return }
            guard let self else { return }
            self.queue.async { self.core.applicationValueChanged(owner: owner, path: path, value: value) }
        }
    }

    static func parseApplication(_ body: DBusValue?, owner: String, root: ObjectPath) -> LocalApplication? {
        guard case .dict(_, _, let entries)? = body else { return nil }
        var services: [LocalApplication.Attribute] = [], chars: [LocalApplication.Attribute] = [], descs: [LocalApplication.Attribute] = []
        for e in entries {
            guard case .objectPath(let p) = e.key, p.isDescendant(of: root), let ifaces = interfaces(e.value) else { continue }
            if let s = ifaces["org.bluez.GattService1"], let uuid = string(s["UUID"]).flatMap(BluetoothUUID.normalize) {
                let primary: Bool = if case .bool(let b)? = s["Primary"] { b } else { true }
                services.append(.init(path: p.rawValue, uuid: uuid, primary: primary))
            }
            if let c = ifaces["org.bluez.GattCharacteristic1"], let uuid = string(c["UUID"]).flatMap(BluetoothUUID.normalize),
               case .objectPath(let parent)? = c["Service"] {
                chars.append(.init(path: p.rawValue, uuid: uuid, flags: strings(c["Flags"]) ?? [], parent: parent.rawValue,
                                   notifyAcquired: c["NotifyAcquired"] != nil, writeAcquired: c["WriteAcquired"] != nil))
            }
            if let d = ifaces["org.bluez.GattDescriptor1"], let uuid = string(d["UUID"]).flatMap(BluetoothUUID.normalize),
               case .objectPath(let parent)? = d["Characteristic"] {
                descs.append(.init(path: p.rawValue, uuid: uuid, flags: strings(d["Flags"]) ?? [], parent: parent.rawValue))
            }
        }
        guard !services.isEmpty else { return nil }
        return LocalApplication(owner: owner, root: root.rawValue, services: services, characteristics: chars, descriptors: descs)
    }

    private static func interfaces(_ v: DBusValue) -> [String: [String: DBusValue]]? {
        guard case .dict(_, _, let entries) = v.unwrapped else { return nil }
        var out: [String: [String: DBusValue]] = [:]
        for e in entries { if case .string(let k) = e.key { out[k] = optionsDictionary(e.value) ?? [:] } }
        return out
    }

    private static func string(_ v: DBusValue?) -> String? { if case .string(let s)? = v?.unwrapped { s } else { nil } }

    /// Reads the advertisement (Properties.GetAll LEAdvertisement1), registers it, then replies.
    func registerAdvertisement(adapter: Int, owner: String, path: ObjectPath, _ responder: Responder) {
        connection.call(destination: owner, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                        arguments: [.string("org.bluez.LEAdvertisement1")], timeout: SimulatorBridge.timeout) { [weak self] result in
            guard let self else { return }
            self.queue.async {
                guard case .success(let m) = result, let props = optionsDictionary(m.body.first) else {
                    return responder.fail(name: "org.bluez.Error.Failed", message: "Failed to parse advertisement.")
                }
                do throws(BlueZErrorReply) {
                    try self.core.registerAdvertisement(adapter: adapter, owner: owner, path: path.rawValue, Self.parseAdvertisement(props))
                    responder.succeed()
                } catch { responder.fail(name: error.name, message: error.message) }
            }
        }
    }

    static func parseAdvertisement(_ p: [String: DBusValue]) throws(BlueZErrorReply) -> LEAdvertisementData {
        var ad = LEAdvertisementData()
        if let t = string(p["Type"]) { ad.type = t }
        ad.serviceUUIDs = (strings(p["ServiceUUIDs"]) ?? []).compactMap(BluetoothUUID.normalize)
        ad.localName = string(p["LocalName"])
        ad.includes = strings(p["Includes"]) ?? []
        if case .uint16(let a)? = p["Appearance"] { ad.appearance = a }
        if case .bool(let d)? = p["Discoverable"] { ad.discoverable = d }
        if case .int16(let t)? = p["TxPower"] { ad.txPower = t }
        ad.solicitUUIDs = (strings(p["SolicitUUIDs"]) ?? []).compactMap(BluetoothUUID.normalize)
        if case .uint16(let v)? = p["DiscoverableTimeout"] { ad.discoverableTimeout = v }
        if case .uint16(let v)? = p["Duration"] { ad.duration = v }
        if case .uint16(let v)? = p["Timeout"] { ad.timeout = v }
        if case .uint32(let v)? = p["MinInterval"] { ad.minInterval = v }
        if case .uint32(let v)? = p["MaxInterval"] { ad.maxInterval = v }
        ad.secondaryChannel = string(p["SecondaryChannel"])
        if case .dict(_, _, let entries)? = p["ManufacturerData"] {
            for e in entries { if case .uint16(let id) = e.key, let b = bytes(e.value) { ad.manufacturerData[id] = b } }
        }
        if case .dict(_, _, let entries)? = p["ServiceData"] {
            for e in entries {
                if case .string(let u) = e.key, let uuid = BluetoothUUID.normalize(u), let b = bytes(e.value) { ad.serviceData[uuid] = b }
            }
        }
        if case .dict(_, _, let entries)? = p["Data"] {
            for e in entries {
                // bluetoothd's parse_data: a type it builds itself fails the registration.
                guard case .byte(let type) = e.key, let b = bytes(e.value), !AdvertisementSnapshot.decodedTypes.contains(type) else {
                    throw .failed("Failed to parse advertisement.")
                }
                ad.data[type] = b
            }
        }
        return ad
    }
}
