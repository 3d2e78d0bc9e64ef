// AdvertisementPattern: what advertisements the gateway reports passively.

import BlueCapKit
import Foundation

/// `{"serviceData": "FCD2", "format": "bthome"}` or `{"manufacturerId": 89}` (optionally with
/// `"address"`): an advertisement matches when it carries service data for the UUID, or
/// manufacturer data for the company id, and comes from the address when one is given.
/// `format` `bthome` decodes BTHome v2 service data into named readings.
package struct AdvertisementPattern: Sendable, Decodable {
    package var serviceData: BLEUUID?
    package var manufacturerID: UInt16?
    package var address: String?
    package var bthome: Bool

    private enum Keys: String, CodingKey, CaseIterable { case serviceData, manufacturerId, address, format }

    package init(serviceData: BLEUUID? = nil, manufacturerID: UInt16? = nil, address: String? = nil, bthome: Bool = false) {
        self.serviceData = serviceData
        self.manufacturerID = manufacturerID
        self.address = address?.uppercased()
        self.bthome = bthome
    }

    package init(from decoder: any Decoder) throws {
        try ConfigKeys.check(decoder, allowed: Set(Keys.allCases.map(\.rawValue)))
        let c = try decoder.container(keyedBy: Keys.self)
        var uuid: BLEUUID?
        if let text = try c.decodeIfPresent(String.self, forKey: .serviceData) {
            guard let u = BLEUUID(string: text) else {
                throw DecodingError.dataCorruptedError(forKey: .serviceData, in: c, debugDescription: "\"\(text)\" is not a UUID (like FCD2)")
            }
            uuid = u
        }
        let id = try c.decodeIfPresent(UInt16.self, forKey: .manufacturerId)
        guard (uuid == nil) != (id == nil) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "a pattern needs exactly one of \"serviceData\" (a UUID) and \"manufacturerId\" (a company id, 0 to 65535)"))
        }
        let address = try c.decodeIfPresent(String.self, forKey: .address)
        if let address, !DeviceConfig.isAddress(address) {
            throw DecodingError.dataCorruptedError(forKey: .address, in: c, debugDescription: "\"\(address)\" is not a Bluetooth address")
        }
        let format = try c.decodeIfPresent(String.self, forKey: .format)
        guard format == nil || format == "bthome" || format == "hex" else {
            throw DecodingError.dataCorruptedError(forKey: .format, in: c, debugDescription: "needs \"bthome\" or \"hex\", not \"\(format!)\"")
        }
        self.init(serviceData: uuid, manufacturerID: id, address: address, bthome: format == "bthome")
    }

    /// Whether `advertisement` from `address` matches.
    package func matches(address: String, _ advertisement: Advertisement) -> Bool {
        if let a = self.address, a != address.uppercased() { return false }
        if let uuid = serviceData { return advertisement.serviceData[uuid] != nil }
        if let id = manufacturerID { return advertisement.manufacturerData[id] != nil }
        return false
    }
}
