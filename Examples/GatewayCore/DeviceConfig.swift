// DeviceConfig: one device the gateway follows by address.

import BlueCapKit
import Foundation

/// `{"address": "C0:FF:EE:00:00:01", "addressType": "public", "name": "kitchen",
/// "characteristics": [...]}`: connected by address (``CentralManager/connect(address:addressType:timeout:)``),
/// kept connected, its ``CharacteristicConfig``s read, subscribed to and written.
package struct DeviceConfig: Sendable, Decodable {
    /// Upper-case `XX:XX:XX:XX:XX:XX`; the topic level of the device.
    package var address: String
    package var addressType: PeripheralAddressType
    /// A friendly name (Home Assistant's device name); default: the address.
    package var name: String?
    package var characteristics: [CharacteristicConfig]

    private enum Keys: String, CodingKey, CaseIterable { case address, addressType, name, characteristics }

    package init(address: String, addressType: PeripheralAddressType = .public, name: String? = nil,
                 characteristics: [CharacteristicConfig]) {
        self.address = address.uppercased()
        self.addressType = addressType
        self.name = name
        self.characteristics = characteristics
    }

    package init(from decoder: any Decoder) throws {
        try ConfigKeys.check(decoder, allowed: Set(Keys.allCases.map(\.rawValue)))
        let c = try decoder.container(keyedBy: Keys.self)
        let address = try c.decode(String.self, forKey: .address)
        guard Self.isAddress(address) else {
            throw DecodingError.dataCorruptedError(forKey: .address, in: c,
                                                   debugDescription: "\"\(address)\" is not a Bluetooth address (like C0:FF:EE:00:00:01)")
        }
        var type = PeripheralAddressType.public
        if let text = try c.decodeIfPresent(String.self, forKey: .addressType) {
            guard let t = PeripheralAddressType(rawValue: text) else {
                throw DecodingError.dataCorruptedError(forKey: .addressType, in: c, debugDescription: "needs \"public\" or \"random\", not \"\(text)\"")
            }
            type = t
        }
        let characteristics = try c.decode([CharacteristicConfig].self, forKey: .characteristics)
        var names = Set<String>()
        for ch in characteristics where !names.insert(ch.name).inserted {
            throw DecodingError.dataCorruptedError(forKey: .characteristics, in: c,
                                                   debugDescription: "two characteristics are named \"\(ch.name)\"; give each its own \"name\"")
        }
        self.init(address: address, addressType: type, name: try c.decodeIfPresent(String.self, forKey: .name), characteristics: characteristics)
    }

    /// Six hexadecimal byte pairs separated by colons.
    package static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// The characteristic configured under topic level `name`.
    package func characteristic(named name: String) -> CharacteristicConfig? { characteristics.first { $0.name == name } }
}
