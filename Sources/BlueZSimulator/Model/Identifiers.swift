// Identifiers: Bluetooth addresses, UUIDs and the object paths bluetoothd derives from them.

// MARK: - BluetoothUUID

/// UUID strings the way bluetoothd publishes them: 128-bit, lower case.
public enum BluetoothUUID {
    /// The Bluetooth base UUID suffix.
    static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// Expands 16/32-bit forms ("180D", "0x180d", "0000180d") and lower-cases 128-bit ones.
    /// Returns nil for anything that is not a UUID.
    public static func normalize(_ text: String) -> String? {
        var s = text.lowercased()
        if s.hasPrefix("0x") { s.removeFirst(2) }
        let hex = Set("0123456789abcdef")
        if (s.count == 4 || s.count == 8), s.allSatisfy(hex.contains) {
            return String(repeating: "0", count: 8 - s.count) + s + baseSuffix
        }
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.map(\.count) == [8, 4, 4, 4, 12], parts.allSatisfy({ $0.allSatisfy(hex.contains) }) else {
            return nil
        }
        return s
    }

    /// `normalize`, trapping on a malformed literal (for specs written in code).
    static func literal(_ text: String) -> String {
        guard let uuid = normalize(text) else { preconditionFailure("not a Bluetooth UUID: \(text)") }
        return uuid
    }

    /// The Client Characteristic Configuration descriptor (0x2902).
    public static let clientCharacteristicConfiguration = literal("2902")
}

// MARK: - BluetoothAddress

/// Bluetooth device addresses, "XX:XX:XX:XX:XX:XX" upper case.
public enum BluetoothAddress {
    /// Upper-cases and validates; nil when malformed.
    public static func normalize(_ text: String) -> String? {
        let s = text.uppercased()
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        let hex = Set("0123456789ABCDEF")
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(hex.contains) }) else { return nil }
        return s
    }

    /// Address of simulated adapter `index`: 00:B1:0E:5C:00:<index>.
    public static func adapter(_ index: Int) -> String {
        "00:B1:0E:5C:00:" + [UInt8(truncatingIfNeeded: index)].hexString.uppercased()
    }

    /// A deterministic random-static address for storm device `n`.
    static func storm(_ n: Int) -> String {
        let b = [UInt8(0xC0 | ((n >> 24) & 0x3f)), 0x5C, 0x57, UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)]
        return b.map { [$0].hexString.uppercased() }.joined(separator: ":")
    }

    /// A deterministic resolvable private address of the peer with `identity`, after `rotation`
    /// rotations: a hash of both (FNV-1a), its two top bits 01 as a resolvable private address's.
    static func resolvablePrivate(identity: String, rotation: Int) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in Array(identity.utf8) + withUnsafeBytes(of: UInt32(truncatingIfNeeded: rotation).littleEndian, Array.init) {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        var bytes = (0..<6).map { UInt8(truncatingIfNeeded: h >> (8 * $0)) }
        bytes[0] = 0x40 | (bytes[0] & 0x3F)
        return bytes.map { [$0].hexString.uppercased() }.joined(separator: ":")
    }
}

// MARK: - Paths

/// Object paths as bluetoothd builds them.
public enum BlueZPath {
    /// `/org/bluez`.
    public static let root = "/org/bluez"
    /// `/org/bluez/hciN`.
    public static func adapter(_ index: Int) -> String { "\(root)/hci\(index)" }
    /// `/org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX`.
    public static func device(adapter: Int, address: String) -> String {
        Self.adapter(adapter) + "/dev_" + address.split(separator: ":").joined(separator: "_")
    }
    /// `<device>/serviceXXXX` (4 lower-case hex digits of the service handle).
    public static func service(device: String, handle: UInt16) -> String { device + "/service" + hex4(handle) }
    /// `<service>/charXXXX` (the characteristic declaration handle).
    public static func characteristic(service: String, handle: UInt16) -> String { service + "/char" + hex4(handle) }
    /// `<characteristic>/descXXXX`.
    public static func descriptor(characteristic: String, handle: UInt16) -> String { characteristic + "/desc" + hex4(handle) }

    static func hex4(_ v: UInt16) -> String { [UInt8(v >> 8), UInt8(v & 0xff)].hexString }
}
