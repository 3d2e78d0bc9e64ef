// BeaconRegion: an iBeacon identity and its Apple manufacturer-data payload.

import Foundation

/// An iBeacon: proximity UUID, major, minor and the measured power at 1 m.
///
/// The peripheral role advertises it as manufacturer data under Apple's company identifier
/// `0x004C` (`org.bluez.LEAdvertisement1.ManufacturerData = {0x004C: payload}`); the central
/// role decodes it from `Device1.ManufacturerData`. The 23-byte payload is `0x02 0x15`, the
/// 16 UUID bytes, major (UInt16 big-endian), minor (UInt16 big-endian), measured power (Int8).
public struct BeaconRegion: Hashable, Sendable, CustomStringConvertible {
    /// Apple's Bluetooth company identifier.
    public static let appleCompanyIdentifier: UInt16 = 0x004C
    /// iBeacon type byte.
    static let beaconType: UInt8 = 0x02
    /// iBeacon payload length byte (21 bytes follow).
    static let beaconLength: UInt8 = 0x15

    /// The proximity UUID shared by a deployment's beacons.
    public var proximityUUID: UUID
    /// A label for the region, not advertised.
    public var identifier: String
    /// The major group number.
    public var major: UInt16
    /// The minor number within the group.
    public var minor: UInt16
    /// The received signal strength at 1 m, in dBm.
    public var measuredPower: Int8

    /// A beacon region.
    public init(proximityUUID: UUID, identifier: String = "", major: UInt16 = 0, minor: UInt16 = 0, measuredPower: Int8 = -59) {
        self.proximityUUID = proximityUUID
        self.identifier = identifier
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    // MARK: Encoding

    /// The 23-byte payload for the `ManufacturerData` entry keyed by ``appleCompanyIdentifier``.
    public var manufacturerData: Data {
        var data = Data([Self.beaconType, Self.beaconLength])
        data += BLEUUID(proximityUUID).bigEndianBytes
        data += [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
        data.append(UInt8(bitPattern: measuredPower))
        return data
    }

    /// The 25-byte manufacturer-specific data as it appears in an advertising packet:
    /// the company identifier little-endian (`4C 00`) then ``manufacturerData``.
    public var manufacturerSpecificData: Data {
        Self.appleCompanyIdentifier.serialized() + manufacturerData
    }

    // MARK: Decoding

    /// Decodes the 23-byte payload found under `companyIdentifier`; nil unless it is Apple's
    /// and the payload is an iBeacon (`02 15` and exactly 23 bytes).
    public init?(manufacturerData data: Data, companyIdentifier: UInt16 = BeaconRegion.appleCompanyIdentifier, identifier: String = "") {
        let bytes = [UInt8](data)
        guard companyIdentifier == Self.appleCompanyIdentifier, bytes.count == 23,
              bytes[0] == Self.beaconType, bytes[1] == Self.beaconLength,
              let uuid = BLEUUID(bigEndianBytes: bytes[2..<18]) else { return nil }
        self.init(proximityUUID: uuid.uuid, identifier: identifier,
                  major: UInt16(bytes[18]) << 8 | UInt16(bytes[19]),
                  minor: UInt16(bytes[20]) << 8 | UInt16(bytes[21]),
                  measuredPower: Int8(bitPattern: bytes[22]))
    }

    /// Decodes the 25-byte form that starts with the little-endian company identifier.
    public init?(manufacturerSpecificData data: Data, identifier: String = "") {
        guard data.count == 25, let company = try? SerDe.decode(UInt16.self, from: data, at: 0) else { return nil }
        self.init(manufacturerData: Data(data).dropFirst(2), companyIdentifier: company, identifier: identifier)
    }

    /// `uuid major/minor @ power dBm`.
    public var description: String {
        "\(proximityUUID.uuidString.lowercased()) \(major)/\(minor) @ \(measuredPower) dBm"
    }
}
