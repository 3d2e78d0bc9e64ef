// PeripheralPeer: a SimulatedPeripheral running: stored attribute values plus its firmware.

import Foundation

// MARK: - PeripheralPeer

/// A spec'd peripheral inside the simulator. Holds the attribute values (by handle) and asks
/// the firmware first. Confined to the simulator's queue.
// Confined to the simulator's queue (see SimulatorCore); `@unchecked Sendable` only so scheduled
// closures running on that same queue may capture it.
final class PeripheralPeer: RemotePeer, @unchecked Sendable {
    private(set) var spec: SimulatedPeripheral
    /// Fault: the peripheral lost its bond with us (its keys are gone; ours are not).
    var bondLost = false
    private(set) var database: GattDatabase
    private var values: [UInt16: [UInt8]] = [:]
    /// Whether the peripheral is advertising (can be switched off to simulate it going silent).
    var advertising = true
    /// How many times the private address changed (``SimulatedPeripheral/usesPrivacy``).
    var rotations = 0

    init(spec: SimulatedPeripheral) {
        self.spec = spec
        self.database = GattDatabase(spec: spec.services)
        loadValues()
    }

    /// A firmware update: a new GATT database (new handles) with its initial values.
    func replaceServices(_ services: [SimulatedService]) {
        spec.services = services
        database = GattDatabase(spec: services)
        values.removeAll()
        loadValues()
    }

    private func loadValues() {
        for (s, service) in spec.services.enumerated() {
            for (c, chrc) in service.characteristics.enumerated() {
                let db = database.services[s].characteristics[c]
                values[db.valueHandle] = [UInt8](chrc.value)
                for (d, desc) in chrc.descriptors.enumerated() {
                    values[db.descriptors[d].handle] = [UInt8](desc.value)
                }
            }
        }
    }

    var address: String { spec.address }
    var identity: String? { spec.usesPrivacy ? spec.address : nil }
    var mtu: UInt16 { spec.mtu }

    /// The resolvable private address the peripheral advertises from now.
    var privateAddress: String { BluetoothAddress.resolvablePrivate(identity: spec.address, rotation: rotations) }
    var connectionDelay: Duration { spec.connectionDelay }
    var discoveryDelay: Duration { spec.discoveryDelay }

    var advertisement: AdvertisementSnapshot? {
        guard advertising else { return nil }
        return AdvertisementSnapshot(
            address: spec.usesPrivacy ? privateAddress : spec.address,
            addressType: spec.usesPrivacy ? "random" : spec.addressType.rawValue, name: spec.name, rssi: spec.rssi,
            txPower: spec.txPower, uuids: spec.advertisedUUIDs,
            manufacturerData: spec.manufacturerData.mapValues { [UInt8]($0) },
            serviceData: spec.serviceData.mapValues { [UInt8]($0) },
            appearance: spec.appearance, connectable: spec.connectable, flags: spec.flags,
            otherADStructures: spec.otherADStructures.filter { !AdvertisementSnapshot.decodedTypes.contains($0.key) }
                .mapValues { [UInt8]($0) })
    }

    /// Changes what the peripheral advertises or how it behaves.
    func update(_ change: (inout SimulatedPeripheral) -> Void) { change(&spec) }

    /// The stored value of an attribute.
    func value(handle: UInt16) -> [UInt8] { values[handle] ?? [] }

    /// Stores a value (e.g. before a notification).
    func setValue(_ value: [UInt8], handle: UInt16) { values[handle] = value }

    // MARK: ATT

    /// Counts down ``SimulatedPeripheral/unansweredReads`` of the target's characteristic.
    func leavesUnanswered(_ target: AttributeTarget) -> Bool {
        guard case .characteristic(let vh) = target, let (_, c) = database.characteristic(valueHandle: vh),
              let left = spec.unansweredReads[c.uuid], left > 0 else { return false }
        spec.unansweredReads[c.uuid] = left - 1
        return true
    }

    private func request(_ target: AttributeTarget, offset: Int, central: CentralContext, type: String?) -> GattRequest? {
        switch target {
        case .characteristic(let vh):
            guard let (s, c) = database.characteristic(valueHandle: vh) else { return nil }
            return GattRequest(peripheral: address, adapter: central.adapter, service: s.uuid, characteristic: c.uuid,
                               descriptor: nil, offset: offset, writeType: type)
        case .descriptor(let h):
            guard let (s, c, d) = database.descriptor(handle: h) else { return nil }
            return GattRequest(peripheral: address, adapter: central.adapter, service: s.uuid, characteristic: c.uuid,
                               descriptor: d.uuid, offset: offset, writeType: type)
        }
    }

    private func handle(of target: AttributeTarget) -> UInt16 {
        switch target {
        case .characteristic(let vh): vh
        case .descriptor(let h): h
        }
    }

    private func flags(of target: AttributeTarget) -> [String] {
        switch target {
        case .characteristic(let vh): database.characteristic(valueHandle: vh)?.characteristic.flags ?? []
        case .descriptor(let h): database.descriptor(handle: h)?.descriptor.flags ?? []
        }
    }

    func read(_ target: AttributeTarget, offset: Int, central: CentralContext,
              _ done: @escaping (Result<[UInt8], ATTError>) -> Void) {
        guard let req = request(target, offset: offset, central: central, type: nil) else {
            return done(.failure(.unlikelyError))
        }
        let full: [UInt8]
        if let answer = spec.firmware.onRead?(req) {
            switch answer {
            case .success(let data): full = [UInt8](data)
            case .failure(let e): return done(.failure(e))
            }
        } else {
            guard flags(of: target).contains(where: { $0 == "read" || $0.hasSuffix("-read") }) else {
                return done(.failure(.readNotPermitted))
            }
            full = values[handle(of: target)] ?? []
        }
        guard offset <= full.count else { return done(.failure(.invalidOffset)) }
        done(.success(Array(full[offset...])))
    }

    func write(_ target: AttributeTarget, value: [UInt8], offset: Int, type: String, central: CentralContext,
               _ done: @escaping (Result<Void, ATTError>) -> Void) {
        guard let req = request(target, offset: offset, central: central, type: type) else {
            return done(.failure(.unlikelyError))
        }
        let h = handle(of: target)
        let stored = values[h] ?? []
        if let answer = spec.firmware.onWrite?(req, Data(value)) {
            if case .failure(let e) = answer { return done(.failure(e)) }
        } else {
            let f = flags(of: target)
            let writable = f.contains { $0 == "write" || $0 == "write-without-response" || $0 == "reliable-write" || $0.hasSuffix("-write") }
            guard writable else { return done(.failure(.writeNotPermitted)) }
            guard offset <= stored.count else { return done(.failure(.invalidOffset)) }
        }
        guard offset <= stored.count else { return done(.failure(.invalidOffset)) }
        values[h] = Array(stored[..<offset]) + value
        done(.success(()))
    }

    func subscriptionChanged(valueHandle: UInt16, enabled: Bool, central: CentralContext) {
        guard let c = database.characteristic(valueHandle: valueHandle)?.characteristic else { return }
        spec.firmware.onSubscriptionChange?(c.uuid, enabled)
    }

    func connectionChanged(central: CentralContext, connected: Bool) {
        spec.firmware.onConnectionChange?(central.adapter, connected)
    }
}
