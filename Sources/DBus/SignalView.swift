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

    /// Whether the message's signature is `signature` (compared in place).
    public func hasSignature(_ signature: StaticString) -> Bool { LibDBus.hasSignature(raw, literal: signature) }

    /// The body, read in place (see ``BodyReader``): nil when the message's first argument is not
    /// a string or object path, or when the body's byte order cannot be told from it.
    ///
    /// A received message has been validated by libdbus, and reading it (`dbus_message_iter_init`)
    /// converts a body sent in the other byte order to this machine's. The first argument's text
    /// is handed out as a pointer into the body right after its length word, so the body starts 4
    /// bytes before it; that length word must read as the string's length, and read differently
    /// when byte-swapped (an empty or palindromic length could not tell the order), or the body
    /// is not read.
    public var body: BodyReader? {
        guard let first = LibDBus.firstArgumentText(raw), let signature = LibDBus.signaturePointer(raw) else { return nil }
        let text = UnsafeRawPointer(first)
        let body = text - 4
        let length = strlen(first)
        let word = body.loadUnaligned(as: UInt32.self)
        guard Int(word) == length, word != word.byteSwapped else { return nil }
        return BodyReader(body: body, types: UnsafeRawBufferPointer(start: signature, count: strlen(signature)))
    }
}
