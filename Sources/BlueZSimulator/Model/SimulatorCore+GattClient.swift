// SimulatorCore+GattClient: GattCharacteristic1/GattDescriptor1 methods of remote objects, and
// notifications from peers to subscribed clients.

// MARK: - GATT client

extension SimulatorCore {
    /// Options of ReadValue/WriteValue as the client passed them.
    public struct ValueOptions: Sendable, Equatable {
        /// "offset".
        public var offset: UInt16 = 0
        /// "type" ("request", "command", "reliable"), writes only.
        public var type: String?
        /// Options with the given offset and type.
        public init(offset: UInt16 = 0, type: String? = nil) {
            self.offset = offset
            self.type = type
        }
    }

    private func resolve(_ path: String) throws(BlueZErrorReply) -> (DeviceState, GattObjectKind, RemotePeer) {
        guard let (device, kind) = gatt.object(at: path) else { throw .doesNotExist }
        guard device.gattUp, let peer = device.peer else { throw .failed("Not connected") }
        return (device, kind, peer)
    }

    private func characteristic(_ device: DeviceState, _ valueHandle: UInt16) -> GattDatabase.Characteristic? {
        device.peer?.database.characteristic(valueHandle: valueHandle)?.characteristic
    }

    /// `ReadValue(a{sv})` on a remote characteristic or descriptor. On success the Value
    /// property is updated (PropertiesChanged) before the reply, as bluetoothd does.
    public func readValue(path: String, options: ValueOptions, _ done: @escaping (Result<[UInt8], BlueZErrorReply>) -> Void) {
        let device: DeviceState, kind: GattObjectKind, peer: RemotePeer
        do { (device, kind, peer) = try resolve(path) } catch { return done(.failure(error)) }
        if attHolds(device, { done(.failure($0)) }) { return }
        let target: AttributeTarget
        let interface: String
        switch kind {
        case .service: return done(.failure(.unknownMethod("org.bluez.GattService1", "ReadValue")))
        case .characteristic(let vh): target = .characteristic(valueHandle: vh); interface = "org.bluez.GattCharacteristic1"
        case .descriptor(let h): target = .descriptor(handle: h); interface = "org.bluez.GattDescriptor1"
        }
        securing(device, flags: flags(peer, target), write: false, { done(.failure($0)) }) { [weak self] in
            guard let self else { return }
            if peer.leavesUnanswered(target) { return self.holdUnanswered(device) { done(.failure($0)) } }
            peer.read(target, offset: Int(options.offset), central: self.central(for: device)) { [weak self] result in
                switch result {
                case .success(let bytes):
                    if options.offset == 0 { self?.store.set(path, interface, "Value", .bytes(bytes)) }
                    done(.success(bytes))
                case .failure(let att):
                    done(.failure(att.clientReply))
                }
            }
        }
    }

    /// The Flags of a target.
    private func flags(_ peer: RemotePeer, _ target: AttributeTarget) -> [String] {
        switch target {
        case .characteristic(let vh): peer.database.characteristic(valueHandle: vh)?.characteristic.flags ?? []
        case .descriptor(let h): peer.database.descriptor(handle: h)?.descriptor.flags ?? []
        }
    }

    /// `WriteValue(ay, a{sv})` on a remote characteristic or descriptor, choosing the procedure
    /// from "type" and the Flags as bluetoothd's GATT client does; an encrypted attribute is
    /// written once the link is (see `SimulatorCore+Pairing.swift`).
    public func writeValue(path: String, value: [UInt8], options: ValueOptions, _ done: @escaping (Result<Void, BlueZErrorReply>) -> Void) {
        let device: DeviceState, kind: GattObjectKind, peer: RemotePeer
        do { (device, kind, peer) = try resolve(path) } catch { return done(.failure(error)) }
        if attHolds(device, { done(.failure($0)) }) { return }
        let target: AttributeTarget
        switch kind {
        case .service: return writeUnsecured(path: path, value: value, options: options, done)
        case .characteristic(let vh): target = .characteristic(valueHandle: vh)
        case .descriptor(let h): target = .descriptor(handle: h)
        }
        securing(device, flags: flags(peer, target), write: true, { done(.failure($0)) }) { [weak self] in
            self?.writeUnsecured(path: path, value: value, options: options, done)
        }
    }

    private func writeUnsecured(path: String, value: [UInt8], options: ValueOptions, _ done: @escaping (Result<Void, BlueZErrorReply>) -> Void) {
        let device: DeviceState, kind: GattObjectKind, peer: RemotePeer
        do { (device, kind, peer) = try resolve(path) } catch { return done(.failure(error)) }
        let ctx = central(for: device)
        let finish: (Result<Void, ATTError>) -> Void = { done($0.mapError(\.clientReply)) }
        if let type = options.type, !["request", "command", "reliable"].contains(type) { return done(.failure(.invalidArguments)) }
        switch kind {
        case .service:
            done(.failure(.unknownMethod("org.bluez.GattService1", "WriteValue")))
        case .descriptor(let h):
            let uuid = peer.database.descriptor(handle: h)?.descriptor.uuid
            if uuid == BluetoothUUID.clientCharacteristicConfiguration { return done(.failure(.notPermitted("Write not permitted"))) }
            if value.count > 512 { return done(.failure(ATTError.invalidAttributeValueLength.clientReply)) }
            peer.write(.descriptor(handle: h), value: value, offset: Int(options.offset), type: "request", central: ctx, finish)
        case .characteristic(let vh):
            guard let c = characteristic(device, vh) else { return done(.failure(.doesNotExist)) }
            if device.acquiredWrite[vh] != nil { return done(.failure(.notPermitted("Write acquired"))) }
            let type = options.type
            if value.count > 512 { return done(.failure(ATTError.invalidAttributeValueLength.clientReply)) }
            if type == "reliable" || (type == nil && c.has(.reliableWrite)) {
                peer.write(.characteristic(valueHandle: vh), value: value, offset: Int(options.offset), type: "reliable", central: ctx, finish)
            } else if type == "request" || (type == nil && c.has(.write)) {
                peer.write(.characteristic(valueHandle: vh), value: value, offset: Int(options.offset), type: "request", central: ctx, finish)
            } else if (type == "command" || (type == nil && c.has(.writeWithoutResponse))) && options.offset == 0 {
                // Write Without Response: the caller is answered at once; the peer's answer is unseen.
                if value.count > Int(ctx.mtu) - 3 { return done(.failure(.failed("Failed to initiate write"))) }
                if c.has(.writeWithoutResponse) || c.has(.write) {
                    peer.write(.characteristic(valueHandle: vh), value: value, offset: 0, type: "command", central: ctx) { _ in }
                }
                done(.success(()))
            } else if type != nil {
                done(.failure(.failed("Failed to initiate write")))
            } else {
                done(.failure(.notSupported))
            }
        }
    }

    /// `StartNotify()`: one session per client; a second call from the same client succeeds.
    public func startNotify(path: String, sender: String) throws(BlueZErrorReply) {
        guard let (device, kind) = gatt.object(at: path), case .characteristic(let vh) = kind else { throw .doesNotExist }
        guard device.link == .connected else { throw .notConnected }
        guard device.gattUp else { throw .failed("Not connected") }
        if device.acquiredNotify[vh] != nil { throw .notPermitted("Notify acquired") }
        guard let c = characteristic(device, vh), c.canNotify else { throw .notSupported }
        var senders = device.notifySessions[vh] ?? []
        guard senders.insert(sender).inserted else { return }
        device.notifySessions[vh] = senders
        notifySessionsChanged(device, valueHandle: vh)
    }

    /// `StopNotify()`: ends the caller's session.
    public func stopNotify(path: String, sender: String) throws(BlueZErrorReply) {
        guard let (device, kind) = gatt.object(at: path), case .characteristic(let vh) = kind else { throw .doesNotExist }
        if let socket = device.acquiredNotify.removeValue(forKey: vh) {
            socket.close()
            notifySessionsChanged(device, valueHandle: vh)
            return
        }
        guard device.notifySessions[vh]?.remove(sender) != nil else { throw .failed("No notify session started") }
        notifySessionsChanged(device, valueHandle: vh)
    }

    /// Recomputes Notifying/NotifyAcquired and tells the peer when the CCC turns on or off.
    func notifySessionsChanged(_ device: DeviceState, valueHandle vh: UInt16) {
        guard let cp = characteristicPath(device, vh) else { return }
        let acquired = device.acquiredNotify[vh] != nil
        let on = acquired || !(device.notifySessions[vh]?.isEmpty ?? true)
        let was = store.property(cp, "org.bluez.GattCharacteristic1", "Notifying") == .bool(true)
        store.update(cp, "org.bluez.GattCharacteristic1", ["Notifying": .bool(on), "NotifyAcquired": .bool(acquired)])
        if was != on, device.link == .connected {
            device.peer?.subscriptionChanged(valueHandle: vh, enabled: on, central: central(for: device))
        }
    }

    func characteristicPath(_ device: DeviceState, _ vh: UInt16) -> String? {
        guard let c = characteristic(device, vh), let s = device.peer?.database.characteristic(valueHandle: vh)?.service else { return nil }
        return BlueZPath.characteristic(service: BlueZPath.service(device: device.path, handle: s.handle), handle: c.handle)
    }

    /// `AcquireNotify(a{sv})`: returns the client's end of a SOCK_SEQPACKET pair (the caller
    /// owns and must close it after replying) and the MTU. Each notification is one datagram.
    public func acquireNotify(path: String, sender: String) throws(BlueZErrorReply) -> (fd: Int32, mtu: UInt16) {
        guard let (device, kind) = gatt.object(at: path), case .characteristic(let vh) = kind else { throw .doesNotExist }
        guard device.gattUp else { throw .failed("Not connected") }
        if device.acquiredNotify[vh] != nil { throw .notPermitted("Notify acquired") }
        if !(device.notifySessions[vh]?.isEmpty ?? true) { throw .inProgress }
        guard let c = characteristic(device, vh), c.canNotify else { throw .notSupported }
        let (socket, fd) = try AcquiredSocket.make(queue: queue, onDatagram: { _ in }, onClose: { [weak self, weak device] in
            guard let self, let device, device.acquiredNotify[vh] != nil else { return }
            device.acquiredNotify[vh] = nil
            self.notifySessionsChanged(device, valueHandle: vh)
        })
        device.acquiredNotify[vh] = socket
        notifySessionsChanged(device, valueHandle: vh)
        return (fd, central(for: device).mtu)
    }

    /// `AcquireWrite(a{sv})`: each datagram the client sends is a Write Without Response.
    public func acquireWrite(path: String, sender: String) throws(BlueZErrorReply) -> (fd: Int32, mtu: UInt16) {
        guard let (device, kind) = gatt.object(at: path), case .characteristic(let vh) = kind else { throw .doesNotExist }
        guard device.gattUp, let peer = device.peer else { throw .failed("Not connected") }
        if device.acquiredWrite[vh] != nil { throw .notPermitted("Write acquired") }
        guard let c = characteristic(device, vh), c.has(.writeWithoutResponse) else { throw .notSupported }
        let ctx = central(for: device)
        let (socket, fd) = try AcquiredSocket.make(queue: queue, onDatagram: { bytes in
            peer.write(.characteristic(valueHandle: vh), value: bytes, offset: 0, type: "command", central: ctx) { _ in }
        }, onClose: { [weak self, weak device] in
            guard let self, let device, device.acquiredWrite.removeValue(forKey: vh) != nil,
                  let cp = self.characteristicPath(device, vh) else { return }
            self.store.set(cp, "org.bluez.GattCharacteristic1", "WriteAcquired", .bool(false))
        })
        device.acquiredWrite[vh] = socket
        if let cp = characteristicPath(device, vh) { store.set(cp, "org.bluez.GattCharacteristic1", "WriteAcquired", .bool(true)) }
        return (fd, ctx.mtu)
    }

    // MARK: Notifications

    /// A peer sent a notification on `valueHandle`: delivered to every connected central with
    /// notifications on (Value PropertiesChanged, or one datagram on an acquired socket).
    /// Returns how many centrals received it.
    @discardableResult
    func deliverNotification(from peer: RemotePeer, valueHandle vh: UInt16, value: [UInt8]) -> Int {
        var delivered = 0
        for a in adapters.values {
            guard let device = a.devices[peer.address], device.peer === peer, device.link == .connected else { continue }
            if let socket = device.acquiredNotify[vh] {
                if socket.send(value) { delivered += 1 }
            } else if !(device.notifySessions[vh]?.isEmpty ?? true), let cp = characteristicPath(device, vh) {
                store.set(cp, "org.bluez.GattCharacteristic1", "Value", .bytes(value), force: true)
                delivered += 1
            }
        }
        return delivered
    }
}
