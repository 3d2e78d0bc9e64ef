// Entry point for the fuzz targets: BlueZ's in-place reading of PropertiesChanged, checked
// against the full decoding.
@_spi(Fuzzing) import DBus
import Foundation

/// Checks of BlueZ's readers of wire bytes, for fuzzing. Not part of the supported API
/// (`@_spi(Fuzzing)`).
@_spi(Fuzzing)
public enum BlueZFuzzing {
    /// Compares the in-place reading of a lone PropertiesChanged change (``LoneChange``, on
    /// DBus's ``BodyReader``) with the full decoding of the same message (``Message``): nil when
    /// they agree, else what differs. The reader must find exactly the lone change the decoded
    /// body holds — except nil where the first argument's length word reads the same in both
    /// byte orders (the body is then left to the decoder).
    public static func loneChangeMismatch(messageBytes: UnsafeRawBufferPointer) -> String? {
        DBusFuzzing.withSignalView(messageBytes: messageBytes) { view -> String? in
            let expected = DBusFuzzing.decode(messageBytes: messageBytes).flatMap(loneChange)
            let change = LoneChange(view)
            guard let change, let expected else {
                return change == nil && expected == nil ? nil
                    : "lone change \(String(describing: change?.propertyName)), decoded \(String(describing: expected))"
            }
            guard change.interfaceName == expected.interface, change.propertyName == expected.name,
                  change.isProperty(expected.name, of: expected.interface),
                  !change.isProperty(expected.name + "x", of: expected.interface),
                  !change.isProperty(expected.name, of: expected.interface + "x") else {
                return "lone change of \(change.interfaceName).\(change.propertyName), decoded \(expected)"
            }
            if case .array(.byte, let items) = expected.value {
                let bytes = Data(items.map { if case .byte(let b) = $0 { b } else { 0 } })
                return change.bytes == bytes && change.basicValue == nil ? nil : "lone bytes \(String(describing: change.bytes)), decoded \(expected.value)"
            }
            return change.bytes == nil && same(change.basicValue, expected.value) ? nil
                : "lone value \(String(describing: change.basicValue)), decoded \(expected.value)"
        } ?? nil
    }

    /// The lone change of a decoded PropertiesChanged body (`sa{sv}as`, one entry, nothing
    /// invalidated) whose value is basic or a byte array, as ``LoneChange`` should find it.
    private static func loneChange(_ message: Message) -> (interface: String, name: String, value: DBusValue)? {
        guard message.signature == "sa{sv}as", message.body.count == 3,
              case .string(let interface) = message.body[0],
              case .dict(_, _, let entries) = message.body[1], entries.count == 1,
              case .array(_, let invalidated) = message.body[2], invalidated.isEmpty,
              case .string(let name) = entries[0].key, case .variant(let value) = entries[0].value else { return nil }
        let length = UInt32(interface.utf8.count)
        guard length != length.byteSwapped else { return nil }
        switch value {
        case .array(.byte, _), .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath:
            return (interface, name, value)
        default:
            return nil
        }
    }

    /// Equal values, a double compared by its bits (NaN included).
    private static func same(_ a: DBusValue?, _ b: DBusValue?) -> Bool {
        if case .double(let x)? = a, case .double(let y)? = b { return x.bitPattern == y.bitPattern }
        return a == b
    }
}
