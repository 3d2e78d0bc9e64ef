// DiscoveryFilter: one client's Adapter1.SetDiscoveryFilter, and how bluetoothd matches devices.

// MARK: - DiscoveryFilter

/// A discovery filter as set by `Adapter1.SetDiscoveryFilter(a{sv})`.
public struct DiscoveryFilter: Sendable, Equatable {
    /// "auto", "bredr" or "le".
    public enum Transport: String, Sendable {
        /// `"auto"`: LE and BR/EDR (interleaved discovery).
        case auto
        /// `"bredr"`: BR/EDR inquiry only.
        case bredr
        /// `"le"`: LE scanning only.
        case le
    }

    /// Service UUIDs (128-bit, lower case); empty matches any.
    public var uuids: [String] = []
    /// RSSI threshold (-127...20).
    public var rssi: Int16?
    /// Pathloss threshold (≤ 137).
    public var pathloss: UInt16?
    /// Scan type.
    public var transport: Transport = .auto
    /// Report every advertisement (PropertiesChanged for ManufacturerData/ServiceData each time).
    public var duplicateData = false
    /// Make the adapter discoverable while discovering.
    public var discoverable = false
    /// Prefix of address or name.
    public var pattern: String?
    /// AutoConnect (accepted, not acted on).
    public var autoConnect = false

    /// An empty filter.
    public init() {}

    /// The keys `GetDiscoveryFilters` returns.
    public static let supportedKeys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern", "AutoConnect"]

    /// Checks bluetoothd's constraints; throws `InvalidArguments` as bluetoothd does.
    public func validated() throws(BlueZErrorReply) -> DiscoveryFilter {
        if let r = rssi, r > 20 || r < -127 { throw .invalidArguments }
        if let p = pathloss, p > 137 { throw .invalidArguments }
        if rssi != nil && pathloss != nil { throw .invalidArguments }
        return self
    }

    /// Whether an advertisement from `peer` at `rssi` passes this filter (the per-client test of
    /// bluetoothd's `is_filter_match`, with the documented RSSI/Pathloss rules and the pattern).
    func matches(_ ad: AdvertisementSnapshot) -> Bool {
        if transport == .bredr { return false }
        if !uuids.isEmpty && !uuids.contains(where: ad.uuids.contains) { return false }
        if let r = rssi, ad.rssi < r { return false }
        if let p = pathloss {
            guard let tx = ad.txPower, Int(tx) - Int(ad.rssi) <= Int(p) else { return false }
        }
        if let pattern, !pattern.isEmpty {
            let byAddress = ad.address.uppercased().hasPrefix(pattern.uppercased())
            let byName = ad.name.map { $0.hasPrefix(pattern) } ?? false
            if !byAddress && !byName { return false }
        }
        return true
    }

    /// Whether the filter asks for proximity (RSSI or Pathloss): then no RSSI delta threshold applies.
    var hasProximity: Bool { rssi != nil || pathloss != nil }
}

// MARK: - AdvertisementSnapshot

/// What one advertising report carries, as the scanner sees it.
struct AdvertisementSnapshot: Equatable {
    var address: String
    var addressType: String
    var name: String?
    var rssi: Int16
    var txPower: Int16?
    var uuids: [String]
    var manufacturerData: [UInt16: [UInt8]]
    var serviceData: [String: [UInt8]]
    var appearance: UInt16?
    var connectable: Bool
    /// The name travels in the scan response (as bluetoothd does for its own advertisements'
    /// LocalName): an active scan gets it, a passive one (advertisement monitors) never does.
    var nameInScanResponse = false
    /// The Flags AD structure, if advertised.
    var flags: UInt8?
    /// AD structures of the types bluetoothd keeps raw (Device1.AdvertisingData).
    var otherADStructures: [UInt8: [UInt8]] = [:]

    /// The AD types bluetoothd never keeps raw: `type_reject_list` in `src/shared/ad.c` (5.55
    /// to 5.82), which `bt_ad_add_data` refuses.
    static let decodedTypes: Set<UInt8> = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0D, 0x0E, 0x0F, 0x10, 0x11,
        0x12, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21,
        0x22, 0x23, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x3D, 0xFF,
    ]

    /// The AD structures a passive scan receives: manufacturer data (0xFF), service data (0x16
    /// for 16-bit UUIDs, 0x21 otherwise), the service UUID lists (0x03, 0x07), the TX power
    /// (0x0A), the flags (0x01), the raw other types and, unless in the scan response, the complete local name (0x09).
    var passiveADStructures: [(type: UInt8, data: [UInt8])] {
        var result: [(type: UInt8, data: [UInt8])] = []
        for (id, payload) in manufacturerData.sorted(by: { $0.key < $1.key }) {
            result.append((0xFF, [UInt8(id & 0xFF), UInt8(id >> 8)] + payload))
        }
        for (uuid, payload) in serviceData.sorted(by: { $0.key < $1.key }) {
            let bytes = BluetoothUUID.littleEndianBytes(uuid)
            result.append((bytes.count == 2 ? 0x16 : 0x21, bytes + payload))
        }
        let lists = uuids.map(BluetoothUUID.littleEndianBytes)
        let short = lists.filter { $0.count == 2 }.flatMap { $0 }
        let long = lists.filter { $0.count == 16 }.flatMap { $0 }
        if !short.isEmpty { result.append((0x03, short)) }
        if !long.isEmpty { result.append((0x07, long)) }
        if let flags { result.append((0x01, [flags])) }
        if let txPower { result.append((0x0A, [UInt8(bitPattern: Int8(clamping: txPower))])) }
        for (type, data) in otherADStructures.sorted(by: { $0.key < $1.key }) { result.append((type, data)) }
        if let name, !nameInScanResponse { result.append((0x09, Array(name.utf8))) }
        return result
    }
}
