// CharacteristicConfig: one characteristic of a followed device — what to read, subscribe to,
// accept writes for.

import BlueCapKit
import Foundation

/// `{"uuid": "F000AA11-…", "service": "F000AA10-…", "name": "accelerometer", "type": "profile",
/// "read": false, "notify": true, "writable": false, "writeOnConnect": "01", "retain": false}`.
///
/// Only `uuid` is required. `name` is the topic level (default: the UUID in lower case); `type`
/// a ``ValueFormat`` (default: the built-in profile when there is one, else hex); `read` reads
/// the value once per connection (default: true unless `notify`); `notify` subscribes;
/// `writable` accepts `…/set` writes; `writeOnConnect` (hex) is written on every connection.
package struct CharacteristicConfig: Sendable, Decodable {
    package var uuid: BLEUUID
    package var service: BLEUUID?
    package var name: String
    package var format: ValueFormat
    package var read: Bool
    package var notify: Bool
    package var writable: Bool
    package var writeOnConnect: Data?
    package var retain: Bool

    private enum Keys: String, CodingKey, CaseIterable {
        case uuid, service, name, type, read, notify, writable, writeOnConnect, retain
    }

    package init(uuid: BLEUUID, service: BLEUUID? = nil, name: String? = nil, format: ValueFormat? = nil,
                 read: Bool? = nil, notify: Bool = false, writable: Bool = false, writeOnConnect: Data? = nil, retain: Bool = false) {
        self.uuid = uuid
        self.service = service
        self.name = name ?? uuid.uuidString.lowercased()
        self.format = format ?? ValueFormat.automatic(for: uuid, service: service)
        self.read = read ?? !notify
        self.notify = notify
        self.writable = writable
        self.writeOnConnect = writeOnConnect
        self.retain = retain
    }

    package init(from decoder: any Decoder) throws {
        try ConfigKeys.check(decoder, allowed: Set(Keys.allCases.map(\.rawValue)))
        let c = try decoder.container(keyedBy: Keys.self)
        let uuid = try Self.uuid(c, .uuid, decoder)!
        let service = try Self.uuid(c, .service, decoder)
        let name = try c.decodeIfPresent(String.self, forKey: .name)
        if let name { try ConfigKeys.checkTopicLevel(name, decoder, what: "characteristic name") }
        var write: Data?
        if let text = try c.decodeIfPresent(String.self, forKey: .writeOnConnect) {
            guard let d = SerDe.data(hexString: text), d.count <= 512 else {
                throw DecodingError.dataCorruptedError(forKey: .writeOnConnect, in: c,
                                                       debugDescription: "needs hex bytes (at most 512), like \"01\", not \"\(text)\"")
            }
            write = d
        }
        let notify = try c.decodeIfPresent(Bool.self, forKey: .notify) ?? false
        self.init(uuid: uuid, service: service, name: name, format: try c.decodeIfPresent(ValueFormat.self, forKey: .type),
                  read: try c.decodeIfPresent(Bool.self, forKey: .read), notify: notify,
                  writable: try c.decodeIfPresent(Bool.self, forKey: .writable) ?? false, writeOnConnect: write,
                  retain: try c.decodeIfPresent(Bool.self, forKey: .retain) ?? false)
        if format == .profile, ValueFormat.profiles.characteristic(uuid, inService: service) == nil {
            throw DecodingError.dataCorruptedError(forKey: .type, in: c,
                                                   debugDescription: "no built-in profile knows \(uuid.uuidString); use a type such as uint8, int16, utf8 or hex")
        }
    }

    private static func uuid(_ c: KeyedDecodingContainer<Keys>, _ key: Keys, _ decoder: any Decoder) throws -> BLEUUID? {
        guard let text = try (key == .uuid ? c.decode(String.self, forKey: key) : c.decodeIfPresent(String.self, forKey: key)) else { return nil }
        guard let uuid = BLEUUID(string: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "\"\(text)\" is not a UUID (like 2A19 or F000AA11-0451-4000-B000-000000000000)")
        }
        return uuid
    }
}
