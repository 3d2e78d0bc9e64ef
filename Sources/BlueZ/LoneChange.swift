// LoneChange: the one change of a PropertiesChanged signal, read in place from its body.
import DBus
import Foundation

/// A `org.freedesktop.DBus.Properties.PropertiesChanged` body (`sa{sv}as`) that changes exactly
/// one property, holding a basic value or an array of bytes, and invalidates nothing: the shape
/// of every StartNotify notification (`GattCharacteristic1.Value`) and of a scan's RSSI updates.
///
/// Read with DBus's generic in-place reader (``BodyReader``) instead of being decoded into a
/// ``Message``: the names are compared in place and no String is made for them unless asked;
/// the value is read when asked. Like the ``SignalView`` it comes from, only valid during the
/// subscription's `peek` call.
struct LoneChange {
    // MARK: Fields

    /// The interface name's bytes (without the terminating NUL).
    let interface: UnsafeRawBufferPointer
    /// The changed property's name.
    let name: UnsafeRawBufferPointer
    /// A reader at the variant's value.
    private let value: BodyReader

    // MARK: Reading

    /// The lone change of `view`'s body; nil for any other signature or shape, and when the
    /// body cannot be read in place (``SignalView/body``: the message's byte order cannot be
    /// told from its first argument, e.g. an empty interface name).
    init?(_ view: SignalView) {
        guard view.hasSignature("sa{sv}as"), var body = view.body, let interface = body.readString(),
              let (name, value) = body.readArray({ changed -> (UnsafeRawBufferPointer, BodyReader)? in
                  // Exactly one entry: a name and a variant holding a basic value or `ay`.
                  let entry = changed.readStruct { entry -> (UnsafeRawBufferPointer, BodyReader)? in
                      guard let name = entry.readString(),
                            let value = entry.readVariant({ v -> BodyReader? in Self.isReadable(v) ? v : nil }) else { return nil }
                      return (name, value)
                  }
                  return changed.isAtEnd ? entry : nil
              }),
              // Nothing invalidated.
              body.readArray({ invalidated in invalidated.isAtEnd ? () : nil }) != nil else { return nil }
        self.interface = interface
        self.name = name
        self.value = value
    }

    /// Whether the variant's value is one this reader takes: an array of bytes, or a basic
    /// value other than a signature or file descriptor.
    private static func isReadable(_ value: BodyReader) -> Bool {
        if value.nextIsByteArray { return true }
        switch value.nextType {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"), UInt8(ascii: "u"),
             UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"), UInt8(ascii: "o"):
            return true
        default:
            return false
        }
    }

    // MARK: Values

    /// Whether the change is of `property` of `interface` (compared in place).
    func isProperty(_ property: String, of interface: String) -> Bool {
        Self.equals(name, property) && Self.equals(self.interface, interface)
    }

    /// The interface's name, as a String.
    var interfaceName: String { String(decoding: interface, as: UTF8.self) }
    /// The property's name, as a String.
    var propertyName: String { String(decoding: name, as: UTF8.self) }

    /// The bytes, when the value is an array of bytes.
    var bytes: Data? {
        var reader = value
        return reader.readBytes().map { $0.isEmpty ? Data() : Data($0) }
    }

    /// The value (the variant unwrapped), when it is a basic value.
    var basicValue: DBusValue? {
        guard !value.nextIsByteArray else { return nil }
        var reader = value
        return reader.readBasic()
    }

    /// Whether `bytes` (a name read in place) spells `text`.
    static func equals(_ bytes: UnsafeRawBufferPointer, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.count == bytes.count && (utf8.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, utf8.count) == 0)
        }
    }
}
