// Scenario: simulated peripherals described in JSON (the same content as the Swift specs).

import Foundation

// MARK: - Scenario

/// A JSON scenario for `bluez-sim --scenario FILE.json` or `org.bluecap.Simulator1.AddPeripheral`.
///
/// ```json
/// {"adapters": 2, "peripherals": [{"address": "C0:FF:EE:00:00:01", "name": "Pulse", "rssi": -50,
///   "uuids": ["180D"], "manufacturerData": {"76": "0102"}, "serviceData": {"180D": "09"}, "adapters": [0],
///   "services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "flags": ["read", "notify"],
///     "value": "003c", "descriptors": [{"uuid": "2901", "value": "4869"}]}]}]}]}
/// ```
/// Byte values are hex strings; manufacturer ids are decimal strings.
public struct Scenario: Codable, Sendable {
    /// Number of adapters (hci0…); nil leaves the command line's choice.
    public var adapters: Int?
    /// The peripherals.
    public var peripherals: [PeripheralEntry]

    /// One peripheral.
    public struct PeripheralEntry: Codable, Sendable {
        /// The Bluetooth address, `"C0:FF:EE:00:00:01"`.
        public var address: String
        /// `"public"` or `"random"` (nil: public).
        public var addressType: SimulatedPeripheral.AddressType?
        /// The advertised local name.
        public var name: String?
        /// The RSSI discovery reports, in dBm.
        public var rssi: Int16?
        /// The advertised TX power, in dBm.
        public var txPower: Int16?
        /// The advertised service UUIDs.
        public var uuids: [String]?
        /// Manufacturer data: company identifier (decimal, `"76"` is Apple) to hex bytes.
        public var manufacturerData: [String: String]?
        /// Service data: UUID to hex bytes.
        public var serviceData: [String: String]?
        /// The GAP appearance value.
        public var appearance: UInt16?
        /// Whether a central may connect (nil: true).
        public var connectable: Bool?
        /// The ATT MTU a connection negotiates (nil: 517).
        public var mtu: UInt16?
        /// Adapters in range (nil: all).
        public var adapters: [Int]?
        /// The GATT services.
        public var services: [ServiceEntry]?

        /// The Swift spec; throws `ScenarioError` on malformed content.
        public var peripheral: SimulatedPeripheral {
            get throws(ScenarioError) {
                guard BluetoothAddress.normalize(address) != nil else { throw ScenarioError("bad address \(address)") }
                var p = SimulatedPeripheral.spec(address: address)
                p.addressType = addressType ?? .public
                p.name = name
                p.rssi = rssi ?? -60
                p.txPower = txPower
                p.advertisedUUIDs = try (uuids ?? []).map(Scenario.uuid)
                for (k, v) in manufacturerData ?? [:] {
                    guard let id = UInt16(k) else { throw ScenarioError("bad manufacturer id \(k)") }
                    p.manufacturerData[id] = try Scenario.hex(v)
                }
                for (k, v) in serviceData ?? [:] { p.serviceData[try Scenario.uuid(k)] = try Scenario.hex(v) }
                p.appearance = appearance
                p.connectable = connectable ?? true
                p.mtu = mtu ?? 517
                for s in services ?? [] {
                    var service = SimulatedService(uuid: try Scenario.uuid(s.uuid), primary: s.primary ?? true)
                    for c in s.characteristics ?? [] {
                        let flags = try (c.flags ?? ["read"]).map { (f: String) throws(ScenarioError) -> CharacteristicFlag in
                            guard let flag = CharacteristicFlag(rawValue: f) else { throw ScenarioError("unknown flag \(f)") }
                            return flag
                        }
                        var chr = SimulatedCharacteristic(uuid: try Scenario.uuid(c.uuid), flags: flags, value: try Scenario.hex(c.value ?? ""))
                        for d in c.descriptors ?? [] {
                            chr.descriptors.append(SimulatedDescriptor(uuid: try Scenario.uuid(d.uuid), flags: d.flags ?? ["read"],
                                                                       value: try Scenario.hex(d.value ?? "")))
                        }
                        service.characteristics.append(chr)
                    }
                    p.services.append(service)
                }
                return p
            }
        }
    }

    /// A service.
    public struct ServiceEntry: Codable, Sendable {
        /// The UUID.
        public var uuid: String
        /// Whether the service is primary (nil: true).
        public var primary: Bool?
        /// The characteristics.
        public var characteristics: [CharacteristicEntry]?
    }

    /// A characteristic.
    public struct CharacteristicEntry: Codable, Sendable {
        /// The UUID.
        public var uuid: String
        /// `Flags` as BlueZ names them (`"read"`, `"notify"`, …).
        public var flags: [String]?
        /// The initial value, as hex bytes.
        public var value: String?
        /// The descriptors.
        public var descriptors: [DescriptorEntry]?
    }

    /// A descriptor.
    public struct DescriptorEntry: Codable, Sendable {
        /// The UUID.
        public var uuid: String
        /// `Flags` as BlueZ names them (`"read"`, `"notify"`, …).
        public var flags: [String]?
        /// The initial value, as hex bytes.
        public var value: String?
    }

    /// Decodes a scenario from JSON.
    public static func decode(_ data: Data) throws -> Scenario {
        try JSONDecoder().decode(Scenario.self, from: data)
    }

    static func uuid(_ s: String) throws(ScenarioError) -> String {
        guard let u = BluetoothUUID.normalize(s) else { throw ScenarioError("bad UUID \(s)") }
        return u
    }

    static func hex(_ s: String) throws(ScenarioError) -> Data {
        let chars = Array(s.utf8)
        guard chars.count % 2 == 0 else { throw ScenarioError("odd-length hex \(s)") }
        var out = Data()
        var i = 0
        while i < chars.count {
            guard let b = UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16) else { throw ScenarioError("bad hex \(s)") }
            out.append(b)
            i += 2
        }
        return out
    }
}

/// A malformed scenario.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
    init(_ d: String) { description = d }
}
