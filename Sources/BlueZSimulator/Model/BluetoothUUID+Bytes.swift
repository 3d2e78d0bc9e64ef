// BluetoothUUID+Bytes: a UUID string as the bytes of advertising data.

extension BluetoothUUID {
    /// The little-endian bytes of a normalized UUID as advertised: 2 bytes for a 16-bit alias of
    /// the base UUID, else all 16 (a malformed string gives []).
    static func littleEndianBytes(_ uuid: String) -> [UInt8] {
        let hex = Array(uuid.replacingOccurrences(of: "-", with: ""))
        guard hex.count == 32 else { return [] }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: 32, by: 2) {
            guard let b = UInt8(String(hex[i..<i + 2]), radix: 16) else { return [] }
            bytes.append(b)
        }
        if uuid.hasSuffix(baseSuffix), uuid.hasPrefix("0000") { return [bytes[3], bytes[2]] }
        return bytes.reversed()
    }
}
