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
    /// invalidates nothing: the bytes, read straight from the message. Nil for any other shape.
    public func onlyChangedBytes(interface: String, property: String) -> Data? {
        loneChange(interface: { LibDBus.knownStringEquals($0, interface) },
                   name: { LibDBus.knownStringEquals($0, property) },
                   value: { variant in
                       guard LibDBus.argType(variant) == LibDBus.typeArray, LibDBus.elementType(variant) == LibDBus.typeByte else { return nil }
                       var bytes = RawIter()
                       LibDBus.recurse(variant, &bytes)
                       return LibDBus.data(&bytes)
                   })
    }

    /// For an `org.freedesktop.DBus.Properties.PropertiesChanged` signal (`sa{sv}as`) that
    /// changes exactly one property holding a basic value (a number, boolean, string or object
    /// path) and invalidates nothing: the interface, the property's name and its value (the
    /// variant unwrapped). Nil for any other shape.
    public func onlyChangedBasicProperty() -> (interface: String, name: String, value: DBusValue)? {
        var interface = ""
        var name = ""
        guard let value = loneChange(interface: { interface = LibDBus.string($0); return true },
                                     name: { name = LibDBus.string($0); return true },
                                     value: { Marshaling.readBasic($0) }) else { return nil }
        return (interface, name, value)
    }

    /// The walk both readers share: a PropertiesChanged body (`sa{sv}as`) with exactly one
    /// change and nothing invalidated. `interface` and `name` look at the two names (false: not
    /// wanted), `value` reads the variant's content (nil: not wanted). The signature fixes every
    /// type but the variant's, so only the variant's type, the array lengths and the names are
    /// queried; the cheap rejections (the names) come first.
    @inline(__always)
    private func loneChange<V>(interface: (UnsafeMutablePointer<RawIter>) -> Bool,
                               name: (UnsafeMutablePointer<RawIter>) -> Bool,
                               value: (UnsafeMutablePointer<RawIter>) -> V?) -> V? {
        guard LibDBus.hasSignature(raw, literal: "sa{sv}as") else { return nil }
        var body = RawIter()
        guard LibDBus.initRead(raw, &body), interface(&body) else { return nil }
        _ = LibDBus.next(&body)
        var changed = RawIter()
        LibDBus.recurse(&body, &changed)
        // An empty `a{sv}` has no entry (its iterator is past the end).
        guard LibDBus.argType(&changed) == LibDBus.typeDictEntry else { return nil }
        var entry = RawIter()
        LibDBus.recurse(&changed, &entry)
        guard name(&entry) else { return nil }
        _ = LibDBus.next(&entry)
        var variant = RawIter()
        LibDBus.recurse(&entry, &variant)
        guard let result = value(&variant) else { return nil }
        // Exactly one change, no invalidated property.
        guard !LibDBus.next(&changed) else { return nil }
        _ = LibDBus.next(&body)
        var invalidated = RawIter()
        LibDBus.recurse(&body, &invalidated)
        guard LibDBus.argType(&invalidated) == LibDBus.typeInvalid else { return nil }
        return result
    }
}
