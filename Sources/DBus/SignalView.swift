// A received signal read in place, before it is decoded into a `Message`.
import Foundation

/// A signal as libdbus holds it, for handlers that want one or two fields of a frequent signal
/// without decoding the whole message into a ``Message`` (headers as Strings, body as
/// ``DBusValue`` trees).
///
/// Passed to the `peek` of ``Connection/subscribe(rule:peek:_:)`` on the owner thread; it is only
/// valid during that call and must not be kept.
public struct SignalView {
    let raw: RawMessage
    /// The object path the signal was emitted from.
    public let path: ObjectPath?
    /// The sender's unique name (set by the bus).
    public let sender: String?

    init(raw: RawMessage, path: ObjectPath?, sender: String?) {
        self.raw = raw
        self.path = path
        self.sender = sender
    }

    /// For an `org.freedesktop.DBus.Properties.PropertiesChanged` signal (`sa{sv}as`) about
    /// `interface` whose only change is `property`, holding an array of bytes (`ay`), and that
    /// invalidates nothing: the bytes, read straight from the message. Nil for any other shape,
    /// and when the message's byte order cannot be told from its first argument (an empty
    /// interface name): decode the ``Message`` then.
    public func onlyChangedBytes(interface: String, property: String) -> Data? {
        guard let change = loneChange(), LoneChange.equals(change.interface, interface),
              LoneChange.equals(change.name, property) else { return nil }
        return change.bytes
    }

    /// For an `org.freedesktop.DBus.Properties.PropertiesChanged` signal (`sa{sv}as`) that
    /// changes exactly one property holding a basic value (a byte, boolean, integer, double,
    /// string or object path) and invalidates nothing: the interface, the property's name and
    /// its value (the variant unwrapped). Nil for any other shape, as for
    /// ``onlyChangedBytes(interface:property:)``.
    public func onlyChangedBasicProperty() -> (interface: String, name: String, value: DBusValue)? {
        guard let change = loneChange(), let value = change.basicValue else { return nil }
        return (LoneChange.string(change.interface), LoneChange.string(change.name), value)
    }

    /// For an `org.freedesktop.DBus.Properties.PropertiesChanged` signal (`sa{sv}as`) that
    /// changes exactly one property, holding a basic value or an array of bytes, and invalidates
    /// nothing: the change, read once from the message, for a caller that takes either shape
    /// (``onlyChangedBytes(interface:property:)`` and ``onlyChangedBasicProperty()`` each read
    /// it again). Nil for any other shape. Like the view, only valid during the `peek` call.
    public func onlyChangedProperty() -> LoneProperty? { loneChange().map(LoneProperty.init) }

    /// One change read by ``onlyChangedProperty()``: its names are compared in place, and no
    /// String is made for them unless asked.
    public struct LoneProperty {
        let change: LoneChange

        /// Whether the change is of `property` of `interface` (compared in place).
        public func isProperty(_ property: String, of interface: String) -> Bool {
            LoneChange.equals(change.name, property) && LoneChange.equals(change.interface, interface)
        }

        /// The interface's name.
        public var interface: String { LoneChange.string(change.interface) }
        /// The property's name.
        public var name: String { LoneChange.string(change.name) }
        /// The bytes, when the value is an array of bytes.
        public var bytes: Data? { change.bytes }
        /// The value (the variant unwrapped), when it is a basic value.
        public var basicValue: DBusValue? { change.basicValue }
    }

    /// The body read as a lone change (see ``LoneChange``): a received message has been
    /// validated by libdbus, and its signature is checked here.
    private func loneChange() -> LoneChange? {
        guard LibDBus.hasSignature(raw, literal: "sa{sv}as"), let first = LibDBus.firstArgumentString(raw) else { return nil }
        return LoneChange(firstString: first)
    }
}
