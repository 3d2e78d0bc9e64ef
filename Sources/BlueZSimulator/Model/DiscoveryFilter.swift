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
}
