// Advertisement: what a peripheral advertised, from Device1's properties.
import BlueZ
import Foundation

/// The advertising data BlueZ reports for a device (`org.bluez.Device1` properties).
///
/// bluetoothd decodes the AD structures it knows into their own properties (name, UUIDs,
/// manufacturer and service data, TX power, appearance, flags) and keeps the others raw in
/// `AdvertisingData`. ``adStructures`` puts both back together, by AD type, for parsers of
/// beacon and sensor formats.
public struct Advertisement: Sendable, Equatable {
    // MARK: Decoded by BlueZ

    /// The local name (`Name`).
    public var localName: String?
    /// Advertised service UUIDs (`UUIDs`; after service resolution BlueZ adds the resolved services').
    public var serviceUUIDs: [BLEUUID]
    /// Manufacturer data by company identifier (`ManufacturerData`).
    public var manufacturerData: [UInt16: Data]
    /// Service data by service UUID (`ServiceData`).
    public var serviceData: [BLEUUID: Data]
    /// Advertised TX power in dBm (`TxPower`).
    public var txPower: Int16?
    /// Appearance (`Appearance`).
    public var appearance: UInt16?

    // MARK: Raw, flags and address

    /// The AD structures bluetoothd keeps raw, AD type → data without the length and type
    /// bytes (`org.bluez.Device1.AdvertisingData`, `a{yv}`).
    ///
    /// bluetoothd keeps here only the types it does not decode itself (for example Transport
    /// Discovery Data 0x26, Broadcast Name 0x30, mesh or Resolvable Set Identifier 0x2E); flags,
    /// UUID lists, names, TX power, appearance, service and manufacturer data never appear, use
    /// ``adStructures`` for those. One structure per type (a later one replaces an earlier).
    /// nil when bluetoothd exports no such property: when the device advertised no other type,
    /// and on BlueZ before 5.78 unless bluetoothd runs with `--experimental` (the property is
    /// experimental from its introduction in 5.50 to 5.77). bluetoothd announces changes of it only for
    /// Transport Discovery Data: other types are as of the device object's creation.
    public var advertisingData: [UInt8: Data]?
    /// The advertisement's Flags AD structure (`org.bluez.Device1.AdvertisingFlags`, its first
    /// byte). nil when bluetoothd does not export it: on BlueZ before 5.78 unless it runs with
    /// `--experimental`, or when no report carried flags (a scan response alone, an extended
    /// advertisement without them).
    public var flags: AdvertisingFlags?
    /// The kind of the device's address (`org.bluez.Device1.AddressType`); nil if BlueZ did not
    /// report it or reported a value other than "public" and "random".
    public var addressType: AddressType?

    // MARK: Initialisers

    /// An advertisement with the given fields (empty by default).
    public init(localName: String? = nil, serviceUUIDs: [BLEUUID] = [], manufacturerData: [UInt16: Data] = [:],
                serviceData: [BLEUUID: Data] = [:], txPower: Int16? = nil, appearance: UInt16? = nil,
                advertisingData: [UInt8: Data]? = nil, flags: AdvertisingFlags? = nil, addressType: AddressType? = nil) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPower = txPower
        self.appearance = appearance
        self.advertisingData = advertisingData
        self.flags = flags
        self.addressType = addressType
    }

    /// Built from a Device1 snapshot; UUID strings that do not parse are skipped.
    init(_ p: Device1.Properties) {
        localName = p.name
        serviceUUIDs = (p.uuids ?? []).compactMap { BLEUUID(string: $0) }
        manufacturerData = p.manufacturerData ?? [:]
        var sd: [BLEUUID: Data] = [:]
        for (k, v) in p.serviceData ?? [:] { if let u = BLEUUID(string: k) { sd[u] = v } }
        serviceData = sd
        txPower = p.txPower
        appearance = p.appearance
        advertisingData = p.advertisingData
        flags = p.advertisingFlags?.first.map(AdvertisingFlags.init(rawValue:))
        addressType = p.addressType.flatMap(AddressType.init(rawValue:))
    }
}
