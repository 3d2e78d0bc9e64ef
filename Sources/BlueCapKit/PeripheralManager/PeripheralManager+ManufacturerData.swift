// PeripheralManager+ManufacturerData: advertising manufacturer specific data.
import BlueZ
import Foundation
import Futures

extension PeripheralManager {
    /// Advertises connectably with `ManufacturerData` (`a{qv}`: payload by company identifier,
    /// AD type 0xFF on the air), an optional `LocalName` and `ServiceUUIDs`, through
    /// `org.bluez.LEAdvertisingManager1.RegisterAdvertisement`. Replaces a current advertisement.
    ///
    /// bluetoothd puts the manufacturer data and the UUIDs in the advertising data and the local
    /// name in the scan response: a passive scanner (an advertisement monitor) sees the data,
    /// never the name. Keep the data small: 31 bytes of advertising data hold the flags (3),
    /// one manufacturer entry (4 + payload) and a 128-bit UUID (18), leaving 6 bytes of payload.
    ///
    /// `otherADStructures` are advertised as given (`LEAdvertisement1.Data`, AD type → data, 2
    /// bytes each plus the data): only types bluetoothd does not build itself, such as 0x30
    /// Broadcast Name or 0x26 Transport Discovery Data. bluetoothd refuses the registration
    /// (the future fails) for flags, UUID lists, names, TX power, service or manufacturer data,
    /// appearance and the other types it owns. A scanner's bluetoothd reports these in
    /// `Device1.AdvertisingData` (``Advertisement/advertisingData``).
    public func startAdvertising(_ name: String? = nil, uuids: [BLEUUID] = [], manufacturerData: [UInt16: Data],
                                 otherADStructures: [UInt8: Data] = [:]) -> Future<Void> {
        startAdvertising(LocalAdvertisement(type: .peripheral, serviceUUIDs: uuids.map(\.uuidString), localName: name,
                                            manufacturerData: manufacturerData, includes: [], data: otherADStructures))
    }
}
