// Advertisement: what a peripheral advertised, from Device1's properties.
import BlueZ
import Foundation

/// The advertising data BlueZ reports for a device (`org.bluez.Device1` properties).
public struct Advertisement: Sendable, Equatable {
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

    /// An empty advertisement.
    public init(localName: String? = nil, serviceUUIDs: [BLEUUID] = [], manufacturerData: [UInt16: Data] = [:],
                serviceData: [BLEUUID: Data] = [:], txPower: Int16? = nil, appearance: UInt16? = nil) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPower = txPower
        self.appearance = appearance
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
    }
}
